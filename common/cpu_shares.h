#pragma once
// Which CPUs each local rank may run on, so that ranks do not oversubscribe the cores
// (oneDNN's OpenMP threads of several processes on one core slow training down by
// 10x and more: ../shared/reference/runtime-libraries.md, section 2.3).
#include <vector>

namespace layerplan {

// One rank's share: the CPUs it is pinned to and the threads it should run
// (OMP_NUM_THREADS).
struct CpuShare {
  std::vector<int> cpus;
  int threads = 1;
};

// The CPUs this process may run on (its affinity mask, which taskset, cgroups or Slurm
// may have narrowed), in ascending order.
std::vector<int> allowed_cpus();

// Splits `cpus` among `ranks` ranks.
//   - ranks <= cpus: rank k gets the k-th contiguous block; the first (cpus % ranks)
//     blocks have one CPU more. threads = the block's size.
//   - ranks > cpus: rank k gets cpus[k % cpus] alone and 1 thread; several ranks then
//     share a CPU (the caller warns about it).
// Throws std::invalid_argument for no CPUs or ranks < 1.
std::vector<CpuShare> split_cpus(const std::vector<int>& cpus, int ranks);

}  // namespace layerplan
