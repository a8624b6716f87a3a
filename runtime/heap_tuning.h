#pragma once
// Keeps the memory a training step frees in the process instead of returning it to the
// kernel. A step allocates and frees the same large activation buffers every time; glibc
// would serve the largest with mmap and unmap them on free (or trim its heap), so each
// step page-faulted its whole working set in again, the kernel zeroing pages (figures:
// docs/BENCHMARKS.md, "Heap tuning"). The peak resident size is unchanged; memory freed
// after the peak is simply reused.
namespace layerplan {

// Sets glibc's malloc to never use mmap, never trim the heap and grow it 64 MiB at a time. Call once, before the
// large allocations. Returns false where the C library does not take the settings.
bool keep_freed_memory_in_process();

}  // namespace layerplan
