#pragma once
// The step of discovery between hwloc and the job's GPUs: where hwloc's matrix gave no
// NVLink, ask NVML (live nodes only), then classify the remaining pairs by the PCIe rules
// and say in a note what was missing. discover_node() calls it; tests call it on an XML
// export with a fake NVML library to exercise the live path without a GPU.
#include "topology/hwloc_reader.h"
#include "topology/node_topology.h"

namespace layerplan {

// `from_xml`: the node was read from an export (NVML describes this machine, not that
// one, so it is never queried). `use_nvml`: query NVML when live and the matrix is missing.
NodeTopology find_links(HwlocNode found, bool from_xml, bool use_nvml);

}  // namespace layerplan
