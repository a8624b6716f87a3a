#pragma once
// How the NICs between nodes carry GPU traffic, and what share of their line rate that
// reaches (docs/cost-model.md, "Achieved bandwidth"). NCCL over InfiniBand or RoCE (RDMA,
// its IB transport) reaches about 90 % of the line rate in nccl-tests' bus bandwidth at large
// messages; over TCP sockets (its socket transport, or Gloo's) about 60 %.
#include <string>
#include <string_view>

namespace layerplan {

enum class Fabric { kRdma, kTcp };

inline constexpr double kRdmaBusShare = 0.9;
inline constexpr double kTcpBusShare = 0.6;

// Parses "rdma" or "tcp" (case-insensitively); throws UsageError naming the value otherwise.
Fabric parse_fabric(std::string_view text);
std::string_view fabric_name(Fabric fabric);
// The share of the line rate a node's NICs reach for NCCL's traffic over `fabric`.
double fabric_bus_share(Fabric fabric);

}  // namespace layerplan
