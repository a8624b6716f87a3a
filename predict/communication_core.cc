#include "predict/communication_core.h"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "common/cpu_shares.h"

namespace layerplan {

std::string CommunicationCore::describe() const {
  return std::to_string(cores) + (cores == 1 ? " core, " : " cores, ") + std::to_string(compute_threads) +
         (compute_threads == 1 ? " compute thread" : " compute threads");
}

CommunicationCore this_process_communication_core(double core_share) {
  CommunicationCore c;
  c.cores = std::max<int>(1, static_cast<int>(allowed_cpus().size()));
  c.compute_threads = c.cores;
  if (const char* text = std::getenv("OMP_NUM_THREADS")) {
    char* end = nullptr;
    const long threads = std::strtol(text, &end, 10);
    if (end != text && *end == '\0' && threads > 0)
      c.compute_threads = static_cast<int>(std::min<long>(threads, 1 << 20));
  }
  c.core_share = core_share;
  return c;
}

}  // namespace layerplan
