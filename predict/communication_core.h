#pragma once
// Whether a CPU rank has a core its communication thread can use beside the compute.
//
// `train --overlap on` runs the gradient buckets' rings on a communication thread. Over
// Gloo's TCP transport that thread is busy on a CPU for the whole ring (the copies through
// the kernel and the reduce-scatter's sums). When every core the rank may run on already
// runs one of its compute threads, the ring takes its time from the backward instead of
// hiding behind it: on the 2-vCPU VM, 2 ranks of 1 core each, the rings ran 1.6-2.5 times
// longer beside the backward than alone and the step was the same with overlap on or off
// (docs/BENCHMARKS.md, "Gradient all-reduces overlapping the backward"). `predict` then
// prices the rings as blocking.
#include <string>

namespace layerplan {

struct CommunicationCore {
  int cores = 1;            // the CPUs of this process's affinity mask
  int compute_threads = 1;  // OMP_NUM_THREADS, else the cores (OpenMP's default)
  double core_share = 1.0;  // predict --core-share: below 1 when ranks outnumber cores
  bool spare() const { return core_share >= 1.0 && cores > compute_threads; }
  std::string describe() const;  // "2 cores, 1 compute thread"
};

// This process's: its affinity mask and OMP_NUM_THREADS (a value that is not a positive
// integer counts as unset, as libgomp ignores it).
CommunicationCore this_process_communication_core(double core_share);

}  // namespace layerplan
