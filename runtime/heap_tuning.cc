#include "runtime/heap_tuning.h"

#include <malloc.h>

#include <climits>

namespace layerplan {

bool keep_freed_memory_in_process() {
  // mallopt returns 1 on success, 0 on error.
  const bool no_mmap = mallopt(M_MMAP_MAX, 0) == 1;
  const bool no_trim = mallopt(M_TRIM_THRESHOLD, INT_MAX) == 1;
  // Grow the heap in large steps: only the three settings together keep the kernel out of
  // the step (docs/BENCHMARKS.md, "Heap tuning").
  const bool padded = mallopt(M_TOP_PAD, 64 << 20) == 1;
  return no_mmap && no_trim && padded;
}

}  // namespace layerplan
