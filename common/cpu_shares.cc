#include "common/cpu_shares.h"

#include <sched.h>

#include <stdexcept>
#include <string>

namespace layerplan {

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  }
  return cpus;
}

std::vector<CpuShare> split_cpus(const std::vector<int>& cpus, int ranks) {
  if (cpus.empty()) throw std::invalid_argument("split_cpus: no CPUs to share");
  if (ranks < 1) throw std::invalid_argument("split_cpus: " + std::to_string(ranks) + " ranks");
  const size_t m = cpus.size(), n = static_cast<size_t>(ranks);
  std::vector<CpuShare> shares(n);
  if (n > m) {
    for (size_t k = 0; k < n; ++k) shares[k].cpus = {cpus[k % m]};
    return shares;
  }
  size_t next = 0;
  for (size_t k = 0; k < n; ++k) {
    const size_t size = m / n + (k < m % n ? 1 : 0);
    shares[k].cpus.assign(cpus.begin() + static_cast<long>(next), cpus.begin() + static_cast<long>(next + size));
    shares[k].threads = static_cast<int>(size);
    next += size;
  }
  return shares;
}

}  // namespace layerplan
