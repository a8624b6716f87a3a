#include "topology/pcie_rules.h"

#include <algorithm>
#include <string>

#include "common/index.h"

namespace layerplan {

PathKind classify_pcie_pair(const GpuInfo& a, const GpuInfo& b) {
  const auto& pa = a.pcie_path;
  const auto& pb = b.pcie_path;
  size_t common = 0;
  while (common < pa.size() && common < pb.size() && pa[common] == pb[common]) ++common;
  // pcie_path[0] is the host bridge; a shared element after it is a shared PCI bridge.
  if (common >= 2) return PathKind::kPcieSwitch;
  if (common == 1) return PathKind::kHostBridge;
  if (a.package >= 0 && a.package == b.package) return PathKind::kHostBridge;
  return PathKind::kCrossSocket;
}

double pcie_pair_gbytes(const GpuInfo& a, const GpuInfo& b) {
  const double x = a.pcie_gbytes;
  const double y = b.pcie_gbytes;
  if (x > 0 && y > 0) return std::min(x, y);
  return std::max(x, y);
}

void complete_links(NodeTopology& node, bool nvlink_known, const std::string& why_unknown) {
  const int g = node.gpu_count();
  node.links.resize(table_size(g, g));
  const bool switch_fabric = !nvlink_known && !node.nvswitches.empty();
  if (g > 1 && !nvlink_known) {
    if (switch_fabric) {
      node.notes.push_back("no NVLink figures (" + why_unknown + "), but " + std::to_string(node.nvswitches.size()) +
                           " NVSwitch" + (node.nvswitches.size() == 1 ? "" : "es") +
                           " on PCI: GPU pairs are NVSwitch links of unknown bandwidth");
    } else {
      node.notes.push_back("no NVLink information (" + why_unknown + "): PCIe rules used");
    }
  }
  for (int a = 0; a < g; ++a) {
    for (int b = 0; b < g; ++b) {
      GpuLink& link = node.link(a, b);
      if (a == b) {
        link = GpuLink{PathKind::kSelf, 0.0, Source::kNone, 0};
        continue;
      }
      if (link.source != Source::kNone || link.kind == PathKind::kNvlink || link.kind == PathKind::kNvswitch) {
        continue;
      }
      if (switch_fabric) {
        link = GpuLink{PathKind::kNvswitch, 0.0, Source::kNone, 0};
      } else {
        const GpuInfo& ga = node.gpus[static_cast<size_t>(a)];
        const GpuInfo& gb = node.gpus[static_cast<size_t>(b)];
        link = GpuLink{classify_pcie_pair(ga, gb), pcie_pair_gbytes(ga, gb), Source::kPcieRule, 0};
      }
    }
  }
}

}  // namespace layerplan
