#pragma once
// The paper's graph search over an abstract cost graph: every node has a cost per
// configuration, every edge a cost per (source configuration, destination
// configuration) pair. The objective is Σ node costs + Σ edge costs of one choice of
// configuration per node. solve() returns its exact minimum:
//   1. node elimination: a node with one in-edge and one out-edge is replaced by an
//      edge whose table is the min-plus product through it;
//   2. edge elimination: parallel edges between the same two nodes are summed;
//   3. repeated to a fixed point; then, if few enough nodes remain, every assignment of
//      the remainder is enumerated; otherwise, where SearchOptions::tied names groups of
//      which two or more nodes remain, the search starts again with those remaining
//      members tied to one configuration (a restricted space, docs/planner.md §7);
//      otherwise one node's configurations are each fixed in turn (its edges folded into
//      its neighbours' node costs) and the rest solved recursively;
//   4. every eliminated node's configuration is recovered by undoing the eliminations
//      in reverse order.
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace layerplan {

struct CostEdge {
  int src = 0;
  int dst = 0;
  // Row-major table: cost[a * configs(dst) + b] for src configuration a and dst
  // configuration b.
  std::vector<double> cost;
};

struct CostGraph {
  std::vector<std::vector<double>> node_cost;  // node -> configuration -> cost
  std::vector<CostEdge> edges;                 // any number, parallel edges allowed

  int num_nodes() const { return static_cast<int>(node_cost.size()); }
  int configs(int node) const { return static_cast<int>(node_cost.at(static_cast<size_t>(node)).size()); }
  int add_node(std::vector<double> cost);
  void add_edge(int src, int dst, std::vector<double> cost);
};

// Σ node costs + Σ edge costs of `choice` (one configuration index per node).
double evaluate(const CostGraph& graph, const std::vector<int>& choice);

struct SearchOptions {
  // The search gives up (SearchResult::timed_out) once this instant has passed.
  std::optional<std::chrono::steady_clock::time_point> deadline;
  // The straightforward variant for benchmarks: naive min-plus products without the
  // inner-loop bounds. Same result.
  bool naive = false;
  // What reads the time for `deadline` (default: steady_clock::now); tests inject their own.
  std::function<std::chrono::steady_clock::time_point()> clock;
  // The search gives up (SearchResult::too_large) when its live tables and argmin logs
  // would take more bytes than this.
  std::optional<int64_t> max_table_bytes;
  // Groups of nodes that may be tied to one configuration index (index i meaning the same
  // configuration for every member) when elimination leaves more than can be enumerated:
  // the members that remain then are merged into one node and the search starts again.
  // Members of a group need equally many configurations; a node is in one group at most.
  std::vector<std::vector<int>> tied;
};

// When the search tied nodes, the counts cover both passes: the untied one up to where it
// stopped, and the tied one.
struct SearchStats {
  int node_eliminations = 0;
  int edge_eliminations = 0;
  int conditioned_nodes = 0;     // nodes whose configurations were enumerated to recurse
  int remaining_nodes = 0;       // nodes left when elimination first reached its fixed point
  int tied_nodes = 0;            // nodes tied to a group's configuration (0: the full space)
  int64_t table_bytes_peak = 0;  // largest total size of live cost tables
};

struct SearchResult {
  double cost = 0.0;
  std::vector<int> choice;  // configuration index per node; empty when timed out
  bool timed_out = false;
  bool too_large = false;  // gave up at SearchOptions::max_table_bytes
  SearchStats stats;
};

// Throws std::invalid_argument for a malformed graph (an edge naming a missing node, a
// table of the wrong size, a node with no configurations) or malformed SearchOptions::tied.
SearchResult solve(const CostGraph& graph, const SearchOptions& options = {});

}  // namespace layerplan
