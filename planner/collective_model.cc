#include "planner/collective_model.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <string>

namespace layerplan {

namespace {

// The figures of NCCL's tuning model (src/graph/tuning.cc, NCCL 2.19-2.21), in its units:
// microseconds and GB/s. Indices: protocol LL, LL128, Simple; hardware NVLink, PCIe, network.
using PerProtocol = std::array<double, 3>;

constexpr PerProtocol kRingBaseLatencyUs = {6.6, 14.0, 8.4};
constexpr PerProtocol kTreeBaseLatencyUs = {6.8, 14.0, 0.0};
// Latency of one step over each kind of hop.
constexpr std::array<PerProtocol, 3> kRingHopLatencyUs = {{{0.6, 1.9, 3.4}, {1.0, 2.5, 5.7}, {2.7, 4.0, 14.0}}};
constexpr std::array<PerProtocol, 3> kTreeHopLatencyUs = {{{0.6, 1.25, 28.0}, {1.0, 1.9, 28.0}, {5.0, 8.5, 28.0}}};
constexpr int kNvlinkHop = 0, kPcieHop = 1, kNetworkHop = 2;
// The CPU's cost of posting a network operation (x86 Intel), paid by every step of a ring
// that spans nodes; three times for Simple.
constexpr double kNetOverheadUs = 1.0;

// Caps on bus bandwidth, by GPU generation (Volta and older, Ampere, Hopper and newer) and
// node count (1, 2, more). LL's cap is for the whole call; the others are per channel.
using ByNodes = std::array<double, 3>;
constexpr std::array<ByNodes, 3> kLowLatencyMaxGBs = {{{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {87.7, 22.5, 19.0}}};
constexpr std::array<ByNodes, 3> kRingLL128MaxPerChannelGBs = {{{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 36.7}}};
constexpr std::array<ByNodes, 3> kTreeLL128MaxPerChannelGBs = {{{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 29.0}}};
constexpr std::array<ByNodes, 3> kTreeMaxPerChannelGBs = {{{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}}};

// NCCL picks its channel count from its own topology search; the caps above scale with
// it. 16 is what it typically builds on NVSwitch nodes with one NIC per GPU pair or more.
constexpr double kChannels = kNvlinkChannels;

// The tree's measured shortfall for medium sizes, by log2(bytes / 64), 64 B to 256 MiB.
constexpr int kTreeCorrectionSizes = 23;
constexpr std::array<std::array<double, kTreeCorrectionSizes>, 3> kTreeCorrection = {{
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9},
}};

constexpr double kUs = 1e-6, kGBs = 1e9;

int generation_index(int compute_capability) {
  if (compute_capability >= 90) return 2;
  return compute_capability >= 80 ? 1 : 0;
}

int nodes_index(int nodes) { return nodes <= 2 ? nodes - 1 : 2; }

int log2_floor(double x) { return x < 1 ? 0 : static_cast<int>(std::floor(std::log2(x))); }

bool ll128_enabled(const CollectiveHardware& hw) {
  const int cc = hw.compute_capability;
  return hw.nvlink && (cc == 70 || cc == 80 || cc == 90);
}

// Steps of a ring: all of them, and those that cross between nodes.
int ring_steps(Collective collective, int ranks) {
  return collective == Collective::kAllReduce ? 2 * (ranks - 1) : ranks - 1;
}
int ring_network_steps(Collective collective, int nodes) {
  if (collective == Collective::kAllReduce) return nodes > 1 ? 2 * nodes : 0;
  return nodes - 1;
}

struct Context {
  Collective collective;
  const CollectiveGroup& group;
  const CollectiveHardware& hw;
  double bytes;
  int generation, nodes_at;
  double ranks_per_node;
  double bus;  // bytes/s: the slowest hop the algorithm uses
};

double ring_bandwidth(const Context& c, int p) {
  double bus = c.bus;
  if (p == 0) {
    const bool quarter = c.group.nodes > 1 || c.collective == Collective::kAllReduce;
    bus = std::min(
        kLowLatencyMaxGBs[static_cast<size_t>(c.group.nodes == 1 ? c.generation : 0)][static_cast<size_t>(c.nodes_at)] *
            kGBs,
        bus * (quarter ? 0.25 : 1.0 / 3.0));
  } else if (p == 1) {
    bus = std::min(bus * (c.ranks_per_node < 2 ? 0.7 : 0.92),
                   kChannels *
                       kRingLL128MaxPerChannelGBs[static_cast<size_t>(c.generation)][static_cast<size_t>(c.nodes_at)] *
                       kGBs);
  }
  return bus * c.group.ranks / ring_steps(c.collective, c.group.ranks);
}

double ring_latency(const Context& c, int p) {
  const int hop = c.hw.nvlink ? kNvlinkHop : kPcieHop;
  double intra = kRingHopLatencyUs[static_cast<size_t>(hop)][static_cast<size_t>(p)];
  const double inter = kRingHopLatencyUs[kNetworkHop][static_cast<size_t>(p)];
  if (c.group.nodes > 1) intra = std::max(intra, kNetOverheadUs * (p == 2 ? 3 : 1));
  const int steps = ring_steps(c.collective, c.group.ranks);
  const int network_steps = ring_network_steps(c.collective, c.group.nodes);
  double latency =
      kRingBaseLatencyUs[static_cast<size_t>(p)] + std::max(0, steps - network_steps) * intra + network_steps * inter;
  // A ring across nodes that moves at least 64 bytes per channel and rank reaches a plateau
  // of higher latency.
  if (p == 2 && c.group.nodes > 1 && c.collective == Collective::kAllReduce &&
      c.bytes / (kChannels * c.group.ranks) >= 64) {
    latency *= c.hw.compute_capability < 80 ? 1.9 : 1.4;
  }
  return latency * kUs;
}

double tree_bandwidth(const Context& c, int p) {
  const auto g = static_cast<size_t>(c.generation), n = static_cast<size_t>(c.nodes_at);
  double bus = std::min(c.bus * 0.92, kChannels * kTreeMaxPerChannelGBs[g][n] * kGBs);
  if (p == 0) bus = std::min(bus / 3.8, kLowLatencyMaxGBs[c.group.nodes == 1 ? g : 0][n] * kGBs);
  if (p == 1) {
    bus = std::min(bus * (c.group.nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0),
                   kChannels * kTreeLL128MaxPerChannelGBs[g][n] * kGBs);
  }
  const int size_at = log2_floor(c.bytes / 64);
  const double correction =
      size_at < kTreeCorrectionSizes ? kTreeCorrection[static_cast<size_t>(p)][static_cast<size_t>(size_at)] : 1.0;
  return bus * 0.5 * correction;
}

double tree_latency(const Context& c, int p) {
  const int hop = c.hw.nvlink ? kNvlinkHop : kPcieHop;
  const double intra = kTreeHopLatencyUs[static_cast<size_t>(hop)][static_cast<size_t>(p)];
  const double inter = kTreeHopLatencyUs[kNetworkHop][static_cast<size_t>(p)];
  const double per_node = std::floor(c.ranks_per_node);
  return (kTreeBaseLatencyUs[static_cast<size_t>(p)] +
          2 * ((per_node - 1) * intra + log2_floor(c.group.nodes) * inter)) *
         kUs;
}

bool contains(std::string_view text, std::string_view word) {
  std::string upper(text);
  std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char ch) { return std::toupper(ch); });
  return upper.find(word) != std::string::npos;
}

}  // namespace

std::string_view algorithm_name(CollectiveAlgorithm algorithm) {
  return algorithm == CollectiveAlgorithm::kRing ? "ring" : "tree";
}

std::string_view protocol_name(CollectiveProtocol protocol) {
  switch (protocol) {
    case CollectiveProtocol::kLowLatency:
      return "LL";
    case CollectiveProtocol::kLowLatency128:
      return "LL128";
    case CollectiveProtocol::kSimple:
      break;
  }
  return "Simple";
}

double collective_compute_share(const CollectiveHardware& hardware) {
  const int channels = hardware.nvlink ? kNvlinkChannels : kPcieChannels;
  return std::min(1.0, static_cast<double>(channels) / std::max(1, hardware.sms));
}

CollectiveHardware collective_hardware(std::string_view gpu_model) {
  CollectiveHardware hw;
  if (contains(gpu_model, "H100") || contains(gpu_model, "H200")) {
    hw.compute_capability = 90;
    hw.sms = 132;
  }
  if (contains(gpu_model, "V100")) {
    hw.compute_capability = 70;
    hw.sms = 80;
  }
  if (contains(gpu_model, "P100")) {
    hw.compute_capability = 60;
    hw.sms = 56;
  }
  if (contains(gpu_model, "T4")) {
    hw.compute_capability = 75;
    hw.nvlink = false;
    hw.sms = 40;
  }
  if (contains(gpu_model, "PCIE")) hw.nvlink = false;
  return hw;
}

std::vector<CollectiveEstimate> collective_estimates(Collective collective, const CollectiveGroup& group,
                                                     const CollectiveHardware& hardware, double bytes) {
  std::vector<CollectiveEstimate> out;
  if (group.ranks < 2) return out;
  const double bus = group.nodes > 1 ? std::min(group.intra_bandwidth, group.inter_bandwidth) : group.intra_bandwidth;
  const Context c{collective,
                  group,
                  hardware,
                  bytes,
                  generation_index(hardware.compute_capability),
                  nodes_index(group.nodes),
                  static_cast<double>(group.ranks) / group.nodes,
                  bus};
  for (int p = 0; p < 3; ++p) {
    if (p == 1 && !ll128_enabled(hardware)) continue;
    const auto protocol = static_cast<CollectiveProtocol>(p);
    CollectiveEstimate ring{CollectiveAlgorithm::kRing, protocol, ring_latency(c, p), ring_bandwidth(c, p), 0.0};
    out.push_back(ring);
    if (collective == Collective::kAllReduce) {
      out.push_back({CollectiveAlgorithm::kTree, protocol, tree_latency(c, p), tree_bandwidth(c, p), 0.0});
    }
  }
  for (CollectiveEstimate& e : out) e.time_s = e.latency_s + bytes / e.bandwidth;
  return out;
}

CollectiveEstimate fastest_collective(Collective collective, const CollectiveGroup& group,
                                      const CollectiveHardware& hardware, double bytes) {
  const std::vector<CollectiveEstimate> all = collective_estimates(collective, group, hardware, bytes);
  if (all.empty()) return {};
  return *std::min_element(all.begin(), all.end(), [](const CollectiveEstimate& a, const CollectiveEstimate& b) {
    return a.time_s < b.time_s;
  });
}

}  // namespace layerplan
