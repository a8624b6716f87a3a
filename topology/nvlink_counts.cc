#include "topology/nvlink_counts.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "common/index.h"

namespace layerplan {

NvlinkCounts::NvlinkCounts(int gpu_count)
    : gpus(gpu_count),
      direct_gbytes(static_cast<size_t>(gpu_count * gpu_count), 0.0),
      direct_links(static_cast<size_t>(gpu_count * gpu_count), 0),
      switch_gbytes(static_cast<size_t>(gpu_count), 0.0),
      switch_links(static_cast<size_t>(gpu_count), 0) {}

bool NvlinkCounts::any() const {
  return std::any_of(direct_gbytes.begin(), direct_gbytes.end(), [](double v) { return v > 0; }) ||
         std::any_of(switch_gbytes.begin(), switch_gbytes.end(), [](double v) { return v > 0; });
}

int apply_nvlink_counts(const NvlinkCounts& counts, Source source, NodeTopology& node) {
  if (counts.gpus != node.gpu_count()) {
    throw std::logic_error("apply_nvlink_counts: counts for " + std::to_string(counts.gpus) + " GPUs, node has " +
                           std::to_string(node.gpu_count()));
  }
  const int g = counts.gpus;
  auto at = [g](int a, int b) { return flat_index(a, g, b); };
  int set = 0;
  for (int a = 0; a < g; ++a) {
    for (int b = 0; b < g; ++b) {
      if (a == b) continue;
      const double direct = std::max(counts.direct_gbytes[at(a, b)], counts.direct_gbytes[at(b, a)]);
      const int direct_links = std::max(counts.direct_links[at(a, b)], counts.direct_links[at(b, a)]);
      const double sa = counts.switch_gbytes[static_cast<size_t>(a)];
      const double sb = counts.switch_gbytes[static_cast<size_t>(b)];
      const double switched = (sa > 0 && sb > 0) ? std::min(sa, sb) : 0.0;
      const int switch_links =
          std::min(counts.switch_links[static_cast<size_t>(a)], counts.switch_links[static_cast<size_t>(b)]);
      if (direct <= 0 && switched <= 0) continue;
      GpuLink& link = node.link(a, b);
      if (direct >= switched) {
        link = GpuLink{PathKind::kNvlink, direct, source, direct_links};
      } else {
        link = GpuLink{PathKind::kNvswitch, switched, source, switch_links};
      }
      ++set;
    }
  }
  return set;
}

}  // namespace layerplan
