#pragma once
// NVLink as seen from each GPU, before it becomes GPU-pair links: the bandwidth (and link
// count) each GPU has straight to every other GPU, and into the node's NVSwitches. Both
// hwloc's NVLinkBandwidth matrix and NVML are reduced to this, so one rule turns
// "GPU -> switch" into "GPU -> GPU" for both.
#include <vector>

#include "common/index.h"
#include "topology/node_topology.h"

namespace layerplan {

struct NvlinkCounts {
  explicit NvlinkCounts(int gpu_count);

  int gpus;
  // Row-major gpus x gpus, one way, from row GPU to column GPU; 0 = no direct NVLink.
  std::vector<double> direct_gbytes;
  std::vector<int> direct_links;  // 0 where unknown
  // Per GPU: the sum over its links into NVSwitches, one way; 0 = none.
  std::vector<double> switch_gbytes;
  std::vector<int> switch_links;

  double& direct(int from, int to) { return direct_gbytes[flat_index(from, gpus, to)]; }
  int& links(int from, int to) { return direct_links[flat_index(from, gpus, to)]; }
  bool any() const;  // some GPU has some NVLink
};

// Sets `node.link(a, b)` for every GPU pair that NVLink joins, from `source`:
// - direct: kNvlink with the larger of the two directions (a GPU that NVML could not
//   open still shows up as the remote end of its peers' links);
// - through switches: kNvswitch with the smaller of the two GPUs' switch bandwidths (all
//   traffic between them crosses both GPUs' switch links; this is what hwloc's
//   transitive closure of the matrix gives);
// - both: the faster of the two paths, as NCCL picks the best path.
// Pairs without NVLink are left untouched. Returns the number of ordered pairs set.
int apply_nvlink_counts(const NvlinkCounts& counts, Source source, NodeTopology& node);

}  // namespace layerplan
