#pragma once
// What `layerplan predict` knows of the link between two ranks: its one-way bandwidth and
// the time a message costs, which on the machines measured depends on how long the ranks
// computed before sending it and on its size (bench/gloo_link_bench measures them;
// docs/BENCHMARKS.md).
#include <string>
#include <utility>
#include <vector>

namespace layerplan {

// (compute gap s, message time s), gaps ascending.
using LatencyByGap = std::vector<std::pair<double, double>>;

// The figures measured for messages of one size.
struct SizedLatency {
  double bytes = 0;  // of the message each rank sends
  // Its time beyond its bytes at the link's bandwidth, by the compute gap before it.
  LatencyByGap by_gap;
};

struct LinkFigures {
  double gbytes = 0;     // GB/s one way
  double latency_s = 0;  // one latency for the cost model's link (the mean after computing)
  // A small message's time by gap; empty: latency_s at every gap.
  LatencyByGap latency_by_gap;
  // By message size, sizes ascending; empty: latency_by_gap whatever the size (a large
  // message can cost several times a small one beyond its bytes: docs/BENCHMARKS.md, "Why
  // predict prices things as it does").
  std::vector<SizedLatency> latency_by_size;
  // The same for a message one rank sends and the other receives (the receiver's wait), as
  // a move into or out of a layer on fewer devices goes; empty: an exchange's figure.
  std::vector<SizedLatency> one_way_by_size;
  // Measured with more than two ranks: the same for an exchange with `all_peers` ranks at
  // once (by the size of each message) and for one rank receiving from `all_peers` at once
  // (its wait); empty: a message with several peers costs as one with one peer.
  int all_peers = 1;
  std::vector<SizedLatency> all_peers_by_size, fan_in_by_size;

  // The time of a small message that follows `gap_s` seconds of computing: linear between
  // the measured gaps, the nearest measured figure outside them.
  double message_s(double gap_s) const;
  // The same for a message of `bytes`, its bytes at the bandwidth aside: by gap as above,
  // then linear in log(bytes) between the measured sizes, the nearest outside them.
  double message_s(double gap_s, double bytes) const;
  // The same for a one-way message.
  double one_way_s(double gap_s, double bytes) const;
  // An exchange in which a rank sends `bytes` in all to `peers` ranks and receives from
  // them: for more than one peer, linear in the peer count between one peer and
  // all_peers, each message of bytes / peers.
  double exchange_s(double gap_s, double bytes, int peers) const;
  // A one-way move into a rank from `peers` ranks at once, `bytes` in all: the same
  // between one-way and fan-in figures.
  double gather_s(double gap_s, double bytes, int peers) const;
};

// Reads the JSON that bench/gloo_link_bench writes (bandwidth_gbytes, latency_us and
// optionally latency_by_gap, latency_by_size and one_way_by_size). Throws UsageError naming
// the file and what is wrong.
LinkFigures read_link_figures(const std::string& path);
// The same for the file's text; `path` names it in errors.
LinkFigures link_figures_from_json(const std::string& text, const std::string& path);

}  // namespace layerplan
