#pragma once
// What `layerplan predict` knows of the link between two ranks: its one-way bandwidth and
// the time a message costs, which on the machines measured depends on how long the ranks
// computed before sending it (bench/gloo_link_bench measures both; docs/BENCHMARKS.md).
#include <string>
#include <utility>
#include <vector>

namespace layerplan {

struct LinkFigures {
  double gbytes = 0;      // GB/s one way
  double latency_s = 0;   // one latency for the cost model's link (the mean after computing)
  // (compute gap s, message time s), gaps ascending; empty: latency_s at every gap.
  std::vector<std::pair<double, double>> latency_by_gap;

  // The time of a message that follows `gap_s` seconds of computing: linear between the
  // measured gaps, the nearest measured figure outside them.
  double message_s(double gap_s) const;
};

// Reads the JSON that bench/gloo_link_bench writes (bandwidth_gbytes, latency_us and
// optionally latency_by_gap). Throws UsageError naming the file and what is wrong.
LinkFigures read_link_figures(const std::string& path);

}  // namespace layerplan
