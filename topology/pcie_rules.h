#pragma once
// The last step of link discovery: every GPU pair that NVLink information did not cover
// gets a kind and a raw figure from the PCIe tree (docs/topology.md, "PCIe rules").
#include <string>

#include "topology/node_topology.h"

namespace layerplan {

// How two GPUs reach each other over PCIe alone, from their `pcie_path`s and packages:
// a common bridge below the host bridge -> kPcieSwitch; the same host bridge or the same
// package -> kHostBridge; otherwise (different packages, or a package unknown)
// -> kCrossSocket.
PathKind classify_pcie_pair(const GpuInfo& a, const GpuInfo& b);

// The raw GB/s of a PCIe path between two GPUs: the slower of the two GPUs' own links
// (`pcie_gbytes`), ignoring an unknown (0) one; 0 when both are unknown. Bridges' speeds are
// not used: root ports and switch ports report speeds no transfer sees (2.0 GB/s on
// g4dn.metal's root ports, 1.97 on Lassen's switch ports, 1.0 on the DGX-2's), while a GPU's
// own link is what its copies cross.
double pcie_pair_gbytes(const GpuInfo& a, const GpuInfo& b);

// Completes `node.links`: sets the diagonal to kSelf and classifies every pair still
// without a source (Source::kNone and not NVLink/NVSwitch).
// `nvlink_known` says whether any NVLink information existed (a matrix or NVML); when it
// did not, `why_unknown` says why and a note is added. Then, if the node has NVSwitches
// (seen only on PCI), the pairs become kNvswitch with an unknown bandwidth (0,
// Source::kNone) for the GPU table to fill; else they follow the PCIe rules
// (Source::kPcieRule).
void complete_links(NodeTopology& node, bool nvlink_known, const std::string& why_unknown);

}  // namespace layerplan
