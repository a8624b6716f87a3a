#pragma once
// NIC port rates from a live node's sysfs: hwloc says which NICs are up, not how fast they
// are. docs/topology.md, "NIC rates from sysfs", gives the rules.
#include <optional>
#include <string>
#include <string_view>

#include "topology/node_topology.h"

namespace layerplan {

// The sysfs of this machine; tests and $LAYERPLAN_SYSFS_ROOT point elsewhere.
inline constexpr const char* kDefaultSysfsRoot = "/sys";

// Sets NicInfo::rate_gbits and rate_from on every NIC of `node` whose rate sysfs under
// `sysfs_root` gives:
//   - an OpenFabrics device (InfiniBand, RoCE, EFA) NAME: the fastest port N whose
//     SYSFS/class/infiniband/NAME/ports/N/state is ACTIVE (or that has no state file), from
//     its `rate` ("400 Gb/sec (4X NDR)");
//   - a network interface NAME: SYSFS/class/net/NAME/speed, Mb/s (-1 or 0: link down or
//     unknown, no rate).
// A file that cannot be read or says something else adds a note to node.notes and the NIC
// keeps no rate; so does an active OpenFabrics device that sysfs does not list (network
// interfaces get notes only when no OpenFabrics device is active: only then is their rate
// used). Never throws for what the tree holds.
void add_sysfs_nic_rates(NodeTopology& node, const std::string& sysfs_root);

// "400 Gb/sec (4X NDR)" → 400, "2.5 Gb/sec (1X SDR)" → 2.5; nullopt for anything else.
std::optional<double> parse_ib_rate(std::string_view text);

// A network interface's `speed` file in Gb/s: "25000\n" → 25; nullopt for -1 and 0 (no
// link) and for anything that is not a whole number (`garbage` then says so).
std::optional<double> parse_net_speed(std::string_view text, bool& garbage);

}  // namespace layerplan
