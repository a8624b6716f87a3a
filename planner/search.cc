#include "planner/search.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <utility>

#include "common/index.h"
#include "planner/deadline.h"
#include "planner/search_ties.h"

namespace layerplan {

int CostGraph::add_node(std::vector<double> cost) {
  node_cost.push_back(std::move(cost));
  return num_nodes() - 1;
}

void CostGraph::add_edge(int src, int dst, std::vector<double> cost) { edges.push_back({src, dst, std::move(cost)}); }

double evaluate(const CostGraph& graph, const std::vector<int>& choice) {
  double total = 0.0;
  for (int v = 0; v < graph.num_nodes(); ++v) {
    total += graph.node_cost[static_cast<size_t>(v)].at(static_cast<size_t>(choice.at(static_cast<size_t>(v))));
  }
  for (const CostEdge& e : graph.edges) {
    const auto a = static_cast<size_t>(choice.at(static_cast<size_t>(e.src)));
    const auto b = static_cast<size_t>(choice.at(static_cast<size_t>(e.dst)));
    total += e.cost.at(a * static_cast<size_t>(graph.configs(e.dst)) + b);
  }
  return total;
}

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// Remainders with at most this many joint assignments are enumerated outright.
constexpr double kEnumerationLimit = 1 << 20;

struct TooLarge {};

// Thrown where the top-level search would condition and tied groups apply: the members of
// each group that remain, to tie before starting again.
struct NeedsTies {
  std::vector<std::vector<int>> groups;
};

// A live edge of the working graph; table is row-major [src configuration][dst configuration].
struct WorkEdge {
  int src = 0, dst = 0;
  std::vector<double> table;
  bool alive = true;
};

// One step of the elimination log, undone in reverse order to recover configurations.
struct LogEntry {
  enum Kind { kSeries, kLeaf, kIsolated } kind = kSeries;
  int node = 0;             // the eliminated node
  int a = -1, b = -1;       // kSeries: predecessor and successor; kLeaf: the neighbour
  std::vector<int> argmin;  // kSeries: [a cfg * width + b cfg]; kLeaf: [neighbour cfg]
  size_t width = 0;         // kSeries: configurations of the successor
};

class Solver {
 public:
  Solver(const SearchOptions& options, SearchStats& stats)
      : options_(options), stats_(stats), deadline_(options.deadline, options.clock) {}

  // Exact minimum of the working graph `w` and the choice that achieves it (indexed by
  // node id; entries of nodes that were dead on entry are left as they were).
  struct Work {
    std::vector<std::vector<double>> cost;
    std::vector<char> alive;
    std::vector<WorkEdge> edges;
    std::vector<std::vector<int>> in, out;  // live edge ids per node
    double constant = 0.0;
    int live = 0;             // nodes alive
    int64_t table_bytes = 0;  // of the live edges' tables
  };

  double solve(Work w, std::vector<int>& choice, bool top_level) {
    std::vector<LogEntry> log;
    reduce(w, log, /*with_leaves=*/false);
    if (top_level) stats_.remaining_nodes = w.live;
    double best;
    if (assignments(w) <= kEnumerationLimit) {
      best = enumerate(w, choice);
    } else {
      reduce(w, log, /*with_leaves=*/true);
      if (assignments(w) <= kEnumerationLimit) {
        best = enumerate(w, choice);
      } else {
        if (top_level) throw_if_tied(w);
        best = condition(w, choice);
      }
    }
    recover(log, choice);
    return best;
  }

  void check_deadline() { deadline_.check(); }

  Work from_graph(const CostGraph& g) {
    Work w;
    w.cost = g.node_cost;
    w.alive.assign(w.cost.size(), 1);
    w.live = static_cast<int>(w.cost.size());
    w.in.resize(w.cost.size());
    w.out.resize(w.cost.size());
    for (const CostEdge& e : g.edges) {
      deadline_.charge(static_cast<int64_t>(e.cost.size()));
      add_edge(w, e.src, e.dst, e.cost, &stats_);
    }
    return w;
  }

 private:
  // Throws NeedsTies when two or more nodes of some SearchOptions::tied group are alive.
  void throw_if_tied(const Work& w) const {
    NeedsTies needs;
    for (const std::vector<int>& group : options_.tied) {
      std::vector<int> alive;
      for (int v : group) {
        if (w.alive[static_cast<size_t>(v)]) alive.push_back(v);
      }
      if (alive.size() >= 2) needs.groups.push_back(std::move(alive));
    }
    if (!needs.groups.empty()) throw needs;
  }

  static int configs(const Work& w, int v) { return static_cast<int>(w.cost[static_cast<size_t>(v)].size()); }

  // Adds src→dst, summing it into an existing src→dst or dst→src edge (edge elimination).
  static void add_edge(Work& w, int src, int dst, std::vector<double> table, SearchStats* stats) {
    for (int id : w.out[static_cast<size_t>(src)]) {
      WorkEdge& e = w.edges[static_cast<size_t>(id)];
      if (e.dst == dst) {
        for (size_t i = 0; i < table.size(); ++i) e.table[i] += table[i];
        if (stats) ++stats->edge_eliminations;
        return;
      }
    }
    for (int id : w.out[static_cast<size_t>(dst)]) {
      WorkEdge& e = w.edges[static_cast<size_t>(id)];
      if (e.dst == src) {
        const int cd = configs(w, dst), cs = configs(w, src);
        for (int a = 0; a < cs; ++a) {
          for (int b = 0; b < cd; ++b) {
            e.table[flat_index(b, cs, a)] += table[flat_index(a, cd, b)];
          }
        }
        if (stats) ++stats->edge_eliminations;
        return;
      }
    }
    const int id = static_cast<int>(w.edges.size());
    w.table_bytes += static_cast<int64_t>(table.size() * sizeof(double));
    w.edges.push_back({src, dst, std::move(table), true});
    w.out[static_cast<size_t>(src)].push_back(id);
    w.in[static_cast<size_t>(dst)].push_back(id);
  }

  static void remove_edge(Work& w, int id) {
    WorkEdge& e = w.edges[static_cast<size_t>(id)];
    e.alive = false;
    w.table_bytes -= static_cast<int64_t>(e.table.size() * sizeof(double));
    std::vector<double>().swap(e.table);  // `= {}` would keep the capacity: the table stayed allocated
    auto drop = [id](std::vector<int>& list) { std::erase(list, id); };
    drop(w.out[static_cast<size_t>(e.src)]);
    drop(w.in[static_cast<size_t>(e.dst)]);
  }

  static double assignments(const Work& w) {
    double product = 1.0;
    for (size_t v = 0; v < w.alive.size(); ++v) {
      if (w.alive[v]) product *= static_cast<double>(w.cost[v].size());
    }
    return product;
  }

  // Live tables and argmin logs; throws TooLarge past SearchOptions::max_table_bytes.
  void note_table_bytes(const Work& w) {
    const int64_t bytes = w.table_bytes + log_bytes_;
    stats_.table_bytes_peak = std::max(stats_.table_bytes_peak, bytes);
    if (options_.max_table_bytes && bytes > *options_.max_table_bytes) throw TooLarge{};
  }

  // Node elimination and edge elimination to a fixed point; with_leaves also folds
  // nodes with a single edge into their neighbour and drops isolated nodes.
  void reduce(Work& w, std::vector<LogEntry>& log, bool with_leaves) {
    bool changed = true;
    while (changed) {
      changed = false;
      for (int v = 0; v < static_cast<int>(w.alive.size()); ++v) {
        deadline_.charge();
        if (!w.alive[static_cast<size_t>(v)]) continue;
        const size_t ins = w.in[static_cast<size_t>(v)].size();
        const size_t outs = w.out[static_cast<size_t>(v)].size();
        if (ins == 1 && outs == 1) {
          changed |= eliminate_series(w, v, log);
        } else if (with_leaves && ins + outs == 1) {
          eliminate_leaf(w, v, log);
          changed = true;
        } else if (with_leaves && ins + outs == 0 && w.live > 1) {
          eliminate_isolated(w, v, log);
          changed = true;
        }
      }
    }
  }

  bool eliminate_series(Work& w, int j, std::vector<LogEntry>& log) {
    const int e1 = w.in[static_cast<size_t>(j)][0];
    const int e2 = w.out[static_cast<size_t>(j)][0];
    const int i = w.edges[static_cast<size_t>(e1)].src;
    const int k = w.edges[static_cast<size_t>(e2)].dst;
    if (i == k) return false;  // a two-cycle; not a series node
    const int ci = configs(w, i), cj = configs(w, j), ck = configs(w, k);
    // The new table and its argmin log must fit before they are allocated.
    const int64_t new_entries = static_cast<int64_t>(ci) * ck;
    if (options_.max_table_bytes &&
        w.table_bytes + log_bytes_ + new_entries * static_cast<int64_t>(sizeof(double) + sizeof(int)) >
            *options_.max_table_bytes) {
      throw TooLarge{};
    }
    const std::vector<double>& a_tab = w.edges[static_cast<size_t>(e1)].table;
    const std::vector<double>& b_tab = w.edges[static_cast<size_t>(e2)].table;
    const std::vector<double>& node = w.cost[static_cast<size_t>(j)];
    std::vector<double> table(static_cast<size_t>(ci) * static_cast<size_t>(ck), kInf);
    std::vector<int> arg(table.size(), 0);
    if (options_.naive) {
      min_plus_naive(a_tab, node, b_tab, ci, cj, ck, table, arg, deadline_);
    } else {
      min_plus_bounded(a_tab, node, b_tab, ci, cj, ck, table, arg, deadline_);
    }
    log_bytes_ += static_cast<int64_t>(arg.size() * sizeof(int));
    log.push_back({LogEntry::kSeries, j, i, k, std::move(arg), static_cast<size_t>(ck)});
    remove_edge(w, e1);
    remove_edge(w, e2);
    w.alive[static_cast<size_t>(j)] = 0;
    --w.live;
    std::vector<double>().swap(w.cost[static_cast<size_t>(j)]);
    add_edge(w, i, k, std::move(table), &stats_);
    ++stats_.node_eliminations;
    note_table_bytes(w);
    return true;
  }

  // T[a][c] = min_b A[a][b] + N[b] + B[b][c], the textbook triple loop.
  static void min_plus_naive(const std::vector<double>& a_tab, const std::vector<double>& node,
                             const std::vector<double>& b_tab, int ci, int cj, int ck, std::vector<double>& table,
                             std::vector<int>& arg, Deadline& deadline) {
    for (int a = 0; a < ci; ++a) {
      for (int c = 0; c < ck; ++c) {
        deadline.charge(cj);
        double best = kInf;
        int best_b = 0;
        for (int b = 0; b < cj; ++b) {
          const double v = a_tab[flat_index(a, cj, b)] + node[static_cast<size_t>(b)] + b_tab[flat_index(b, ck, c)];
          if (v < best) best = v, best_b = b;
        }
        table[flat_index(a, ck, c)] = best;
        arg[flat_index(a, ck, c)] = best_b;
      }
    }
  }

  // The same product, row by row: for each a, the middle configurations b are visited in
  // ascending order of A[a][b] + N[b], and the visit stops once that prefix plus the
  // smallest entry of B cannot improve the row's worst entry. The inner loop over c is
  // contiguous, so it vectorizes.
  static void min_plus_bounded(const std::vector<double>& a_tab, const std::vector<double>& node,
                               const std::vector<double>& b_tab, int ci, int cj, int ck, std::vector<double>& table,
                               std::vector<int>& arg, Deadline& deadline) {
    double b_min = kInf;
    for (double v : b_tab) b_min = std::min(b_min, v);
    std::vector<std::pair<double, int>> prefix(static_cast<size_t>(cj));
    for (int a = 0; a < ci; ++a) {
      deadline.charge(int64_t{4} * cj);  // the prefix and its sort
      for (int b = 0; b < cj; ++b) {
        prefix[static_cast<size_t>(b)] = {a_tab[flat_index(a, cj, b)] + node[static_cast<size_t>(b)], b};
      }
      std::sort(prefix.begin(), prefix.end());
      double* row = table.data() + static_cast<size_t>(a) * static_cast<size_t>(ck);
      int* row_arg = arg.data() + static_cast<size_t>(a) * static_cast<size_t>(ck);
      double row_max = kInf;
      for (const auto& [s, b] : prefix) {
        if (s + b_min >= row_max) break;
        deadline.charge(ck);
        const double* brow = b_tab.data() + static_cast<size_t>(b) * static_cast<size_t>(ck);
        double new_max = -kInf;
        for (int c = 0; c < ck; ++c) {
          const double v = s + brow[c];
          const bool better = v < row[c];
          row[c] = better ? v : row[c];
          row_arg[c] = better ? b : row_arg[c];
          new_max = std::max(new_max, row[c]);
        }
        row_max = new_max;
      }
    }
  }

  void eliminate_leaf(Work& w, int j, std::vector<LogEntry>& log) {
    const bool is_src = w.in[static_cast<size_t>(j)].empty();
    const int id = is_src ? w.out[static_cast<size_t>(j)][0] : w.in[static_cast<size_t>(j)][0];
    const WorkEdge& e = w.edges[static_cast<size_t>(id)];
    const int u = is_src ? e.dst : e.src;
    const int cj = configs(w, j), cu = configs(w, u);
    std::vector<int> arg(static_cast<size_t>(cu), 0);
    std::vector<double>& ucost = w.cost[static_cast<size_t>(u)];
    for (int b = 0; b < cu; ++b) {
      deadline_.charge(cj);
      double best = kInf;
      for (int a = 0; a < cj; ++a) {
        const size_t at = is_src ? static_cast<size_t>(a * cu + b) : static_cast<size_t>(b * cj + a);
        const double v = w.cost[static_cast<size_t>(j)][static_cast<size_t>(a)] + e.table[at];
        if (v < best) best = v, arg[static_cast<size_t>(b)] = a;
      }
      ucost[static_cast<size_t>(b)] += best;
    }
    log.push_back({LogEntry::kLeaf, j, u, -1, std::move(arg), 0});
    remove_edge(w, id);
    w.alive[static_cast<size_t>(j)] = 0;
    --w.live;
  }

  void eliminate_isolated(Work& w, int j, std::vector<LogEntry>& log) {
    const std::vector<double>& c = w.cost[static_cast<size_t>(j)];
    const auto best = std::min_element(c.begin(), c.end()) - c.begin();
    w.constant += c[static_cast<size_t>(best)];
    log.push_back({LogEntry::kIsolated, j, -1, -1, {static_cast<int>(best)}, 0});
    w.alive[static_cast<size_t>(j)] = 0;
    --w.live;
  }

  // Tries every joint assignment of the live nodes.
  double enumerate(const Work& w, std::vector<int>& choice) {
    std::vector<int> nodes;
    for (int v = 0; v < static_cast<int>(w.alive.size()); ++v) {
      if (w.alive[static_cast<size_t>(v)]) nodes.push_back(v);
    }
    std::vector<int> live_edges;
    for (int id = 0; id < static_cast<int>(w.edges.size()); ++id) {
      if (w.edges[static_cast<size_t>(id)].alive) live_edges.push_back(id);
    }
    std::vector<int> current(w.alive.size(), 0);
    double best = kInf;
    std::vector<int> best_choice = current;
    for (int64_t step = 0;; ++step) {
      deadline_.charge(static_cast<int64_t>(nodes.size() + live_edges.size()) + 1);
      double total = 0.0;
      for (int v : nodes) total += w.cost[static_cast<size_t>(v)][static_cast<size_t>(current[static_cast<size_t>(v)])];
      for (int id : live_edges) {
        const WorkEdge& e = w.edges[static_cast<size_t>(id)];
        total += e.table[flat_index(current[static_cast<size_t>(e.src)], configs(w, e.dst),
                                    current[static_cast<size_t>(e.dst)])];
      }
      if (total < best) best = total, best_choice = current;
      size_t digit = 0;
      while (digit < nodes.size()) {
        const auto v = static_cast<size_t>(nodes[digit]);
        if (++current[v] < configs(w, nodes[digit])) break;
        current[v] = 0;
        ++digit;
      }
      if (digit == nodes.size()) break;
    }
    for (int v : nodes) choice[static_cast<size_t>(v)] = best_choice[static_cast<size_t>(v)];
    return best + w.constant;
  }

  // Fixes each configuration of the live node with the most edges in turn, folds its
  // edges into its neighbours' node costs, and solves the rest recursively.
  double condition(const Work& w, std::vector<int>& choice) {
    int pivot = -1;
    size_t pivot_degree = 0;
    for (int v = 0; v < static_cast<int>(w.alive.size()); ++v) {
      const size_t degree = w.in[static_cast<size_t>(v)].size() + w.out[static_cast<size_t>(v)].size();
      if (w.alive[static_cast<size_t>(v)] && (pivot < 0 || degree > pivot_degree)) pivot = v, pivot_degree = degree;
    }
    ++stats_.conditioned_nodes;
    double best = kInf;
    for (int c = 0; c < configs(w, pivot); ++c) {
      deadline_.charge(w.table_bytes / static_cast<int64_t>(sizeof(double)) + static_cast<int64_t>(w.alive.size()));
      Work fixed = w;
      for (int id : std::vector<int>(fixed.out[static_cast<size_t>(pivot)])) {
        const WorkEdge& e = fixed.edges[static_cast<size_t>(id)];
        const int cd = configs(fixed, e.dst);
        for (int b = 0; b < cd; ++b)
          fixed.cost[static_cast<size_t>(e.dst)][static_cast<size_t>(b)] += e.table[flat_index(c, cd, b)];
        remove_edge(fixed, id);
      }
      for (int id : std::vector<int>(fixed.in[static_cast<size_t>(pivot)])) {
        const WorkEdge& e = fixed.edges[static_cast<size_t>(id)];
        const int cp = configs(fixed, pivot);
        for (int a = 0; a < configs(fixed, e.src); ++a)
          fixed.cost[static_cast<size_t>(e.src)][static_cast<size_t>(a)] += e.table[flat_index(a, cp, c)];
        remove_edge(fixed, id);
      }
      fixed.constant += fixed.cost[static_cast<size_t>(pivot)][static_cast<size_t>(c)];
      fixed.alive[static_cast<size_t>(pivot)] = 0;
      --fixed.live;
      std::vector<int> sub = choice;
      const double value = fixed.live == 0 ? fixed.constant : solve(std::move(fixed), sub, false);
      if (value < best) {
        best = value;
        choice = std::move(sub);
        choice[static_cast<size_t>(pivot)] = c;
      }
    }
    return best;
  }

  static void recover(const std::vector<LogEntry>& log, std::vector<int>& choice) {
    for (auto it = log.rbegin(); it != log.rend(); ++it) {
      int& slot = choice[static_cast<size_t>(it->node)];
      switch (it->kind) {
        case LogEntry::kSeries: {
          slot = it->argmin[static_cast<size_t>(choice[static_cast<size_t>(it->a)]) * it->width +
                            static_cast<size_t>(choice[static_cast<size_t>(it->b)])];
          break;
        }
        case LogEntry::kLeaf:
          slot = it->argmin[static_cast<size_t>(choice[static_cast<size_t>(it->a)])];
          break;
        case LogEntry::kIsolated:
          slot = it->argmin[0];
          break;
      }
    }
  }

  const SearchOptions& options_;
  SearchStats& stats_;
  Deadline deadline_;
  int64_t log_bytes_ = 0;
};

void validate(const CostGraph& graph) {
  for (int v = 0; v < graph.num_nodes(); ++v) {
    if (graph.node_cost[static_cast<size_t>(v)].empty()) {
      throw std::invalid_argument("cost graph node " + std::to_string(v) + " has no configurations");
    }
  }
  for (size_t i = 0; i < graph.edges.size(); ++i) {
    const CostEdge& e = graph.edges[i];
    if (e.src < 0 || e.src >= graph.num_nodes() || e.dst < 0 || e.dst >= graph.num_nodes() || e.src == e.dst) {
      throw std::invalid_argument("cost graph edge " + std::to_string(i) + " joins " + std::to_string(e.src) + " and " +
                                  std::to_string(e.dst) + ", not two of the " + std::to_string(graph.num_nodes()) +
                                  " nodes");
    }
    const size_t expected = static_cast<size_t>(graph.configs(e.src)) * static_cast<size_t>(graph.configs(e.dst));
    if (e.cost.size() != expected) {
      throw std::invalid_argument("cost graph edge " + std::to_string(i) + " has " + std::to_string(e.cost.size()) +
                                  " entries, expected " + std::to_string(expected));
    }
  }
}

// The search again on `graph` with each of `groups` merged into one node (tie_nodes());
// `choice` receives the configuration of every original node.
void solve_tied(const CostGraph& graph, const SearchOptions& options, const std::vector<std::vector<int>>& groups,
                SearchStats& stats, std::vector<int>& choice) {
  const TiedGraph tied = tie_nodes(graph, groups);
  SearchOptions untied = options;
  untied.tied.clear();
  const int remaining = stats.remaining_nodes;  // of the untied graph
  Solver solver(untied, stats);
  std::vector<int> tied_choice(static_cast<size_t>(tied.graph.num_nodes()), 0);
  solver.solve(solver.from_graph(tied.graph), tied_choice, true);
  stats.remaining_nodes = remaining;
  for (const std::vector<int>& group : groups) stats.tied_nodes += static_cast<int>(group.size());
  for (size_t v = 0; v < choice.size(); ++v) choice[v] = tied_choice[static_cast<size_t>(tied.node_of[v])];
}

}  // namespace

SearchResult solve(const CostGraph& graph, const SearchOptions& options) {
  validate(graph);
  check_tied_groups(graph, options.tied);
  SearchResult result;
  if (graph.num_nodes() == 0) return result;
  std::vector<int> choice(static_cast<size_t>(graph.num_nodes()), 0);
  try {
    try {
      Solver solver(options, result.stats);
      solver.check_deadline();  // one that passed already stops the search before any work
      solver.solve(solver.from_graph(graph), choice, true);
    } catch (const NeedsTies& needs) {
      solve_tied(graph, options, needs.groups, result.stats, choice);
    }
  } catch (const DeadlinePassed&) {
    result.timed_out = true;
    return result;
  } catch (const TooLarge&) {
    result.too_large = true;
    return result;
  }
  result.choice = std::move(choice);
  result.cost = evaluate(graph, result.choice);
  return result;
}

}  // namespace layerplan
