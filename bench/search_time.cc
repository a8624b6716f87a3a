// Prints, per zoo model and cluster, the median wall time of planning (configuration
// enumeration + cost tables + elimination search, single thread) with layerplan's
// defaults, beside the straightforward version of the same DP: every aligned device
// block, no element-wise fusion, no table sharing, naive min-plus products.
//
//   build/bench/search_time [--models a,b] [--gpus 4,16,64,256] [--per-node 4,8] [--repeats N]
//                           [--naive-budget S]
//
// Each GPU count is run with each GPUs-per-node value that divides it (12 GPUs: 3 x 4).
// "counted MB" is the planner's own count of its peak (Plan::memory); "measured MB" the
// process's peak resident memory during the row minus its resident memory before it (the
// peak is reset through /proc/self/clear_refs and freed memory trimmed before each row).
#include <malloc.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "model/zoo.h"
#include "planner/planner.h"
#include "topology/cluster_spec.h"

namespace {

using namespace layerplan;

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) out.push_back(item);
  return out;
}

struct Timing {
  double median_s = 0;
  Plan plan;
};

Timing time_plan(const ModelGraph& g, const DeviceGraph& d, const PlanOptions& options, int repeats) {
  std::vector<double> seconds;
  Timing t;
  for (int i = 0; i < repeats; ++i) {
    const auto start = std::chrono::steady_clock::now();
    t.plan = make_plan(g, d, options);
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    if (t.plan.timed_out) break;
  }
  std::sort(seconds.begin(), seconds.end());
  t.median_s = seconds[seconds.size() / 2];
  return t;
}

// A field of /proc/self/status in kB (VmRSS, VmHWM), or -1.
long status_kb(const std::string& field) {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(field + ":", 0) == 0) return std::strtol(line.c_str() + field.size() + 1, nullptr, 10);
  }
  return -1;
}

// Starts a measurement of peak resident memory; returns the resident kB now.
long reset_peak_rss_kb() {
  malloc_trim(0);
  std::ofstream("/proc/self/clear_refs") << "5";  // resets VmHWM to VmRSS (Linux 4.0+)
  return status_kb("VmRSS");
}

long max_rss_kb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

struct BenchArgs {
  std::vector<std::string> models = zoo_model_names();
  std::vector<int> gpu_counts = {4, 16, 64, 256};
  std::vector<int> per_node_counts = {4, 8};
  int repeats = 5;
  double naive_budget = 30;  // seconds for the straightforward DP; 0 skips it
};

std::vector<int> split_ints(const std::string& text) {
  std::vector<int> out;
  for (const std::string& v : split(text)) out.push_back(std::stoi(v));
  return out;
}

bool parse_args(int argc, char** argv, BenchArgs& args) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--models") {
      args.models = split(value);
    } else if (flag == "--gpus") {
      args.gpu_counts = split_ints(value);
    } else if (flag == "--per-node") {
      args.per_node_counts = split_ints(value);
    } else if (flag == "--repeats") {
      args.repeats = std::stoi(value);
    } else if (flag == "--naive-budget") {
      args.naive_budget = std::stod(value);
    } else {
      std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
      return false;
    }
  }
  return true;
}

// The naive column and the speedup over `fast`: "skipped" without a budget. Returns false
// (having said why) when the naive search's optimum is worse than the fast one's.
bool naive_columns(const ModelGraph& graph, const DeviceGraph& devices, const Timing& fast, double budget,
                   std::string& naive_ms, std::string& ratio) {
  naive_ms = "skipped";
  ratio = "";
  if (budget <= 0) return true;
  PlanOptions naive;
  naive.space.placement = PlacementRule::kAlignedBlocks;
  naive.fuse_elementwise = false;
  naive.share_tables = false;
  naive.naive_search = true;
  naive.time_budget_s = budget;
  const Timing slow = time_plan(graph, devices, naive, 1);
  if (slow.plan.timed_out) {
    naive_ms = ">" + std::to_string(static_cast<int>(budget * 1000));
    ratio = ">" + std::to_string(static_cast<int>(budget / fast.median_s)) + "x";
    return true;
  }
  naive_ms = std::to_string(static_cast<long>(slow.median_s * 1000));
  ratio = std::to_string(static_cast<int>(slow.median_s / fast.median_s)) + "x";
  // Both search the same objective; the larger space may only be as good or better.
  if (slow.plan.layer_wise.additive_s() > fast.plan.layer_wise.additive_s() * (1 + 1e-9)) {
    std::fprintf(stderr, "%s %d: naive optimum %.9g is worse than %.9g\n", graph.name().c_str(), devices.device_count(),
                 slow.plan.layer_wise.additive_s(), fast.plan.layer_wise.additive_s());
    return false;
  }
  return true;
}

// One row of the table; false when the naive search disagrees.
bool time_row(const BenchArgs& args, const std::string& name, int gpus, int per_node) {
  ClusterSpec spec;
  spec.gpus_per_node = per_node;
  spec.nodes = gpus / per_node;
  const DeviceGraph devices = build_device_graph(spec);
  const ModelGraph graph = build_zoo_model(name, 32LL * gpus);
  const int reps = gpus >= 256 ? std::max(1, args.repeats / 3) : args.repeats;
  const long rss_before_kb = reset_peak_rss_kb();
  const Timing fast = time_plan(graph, devices, {}, reps);
  const double measured_mb = static_cast<double>(status_kb("VmHWM") - rss_before_kb) / 1e3;
  int max_configs = 0;
  for (int c : fast.plan.space_sizes) max_configs = std::max(max_configs, c);
  std::string naive_ms, ratio;
  if (!naive_columns(graph, devices, fast, args.naive_budget, naive_ms, ratio)) return false;
  std::printf("%-13s %5d %5d %8d %11.1f %11.1f %10.1f %10.1f %11.1f %9.1f %12s %9s%s\n", name.c_str(), gpus, per_node,
              max_configs, fast.median_s * 1e3, (fast.plan.search_s - fast.plan.tables_s) * 1e3,
              static_cast<double>(fast.plan.search_stats.table_bytes_peak) / 1e6,
              static_cast<double>(fast.plan.search_memory.peak()) / 1e6, measured_mb,
              static_cast<double>(max_rss_kb()) / 1e3, naive_ms.c_str(), ratio.c_str(),
              fast.plan.fell_back() ? "  fell back" : "");
  std::fflush(stdout);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  BenchArgs args;
  if (!parse_args(argc, argv, args)) return 2;
  std::printf("%-13s %5s %5s %8s %11s %11s %10s %10s %11s %9s %12s %9s\n", "model", "gpus", "/node", "configs",
              "plan ms", "search ms", "tables MB", "counted MB", "measured MB", "RSS MB", "naive ms", "speedup");
  for (const std::string& name : args.models) {
    for (int gpus : args.gpu_counts) {
      for (int per_node : args.per_node_counts) {
        if (per_node > gpus || gpus % per_node != 0) continue;
        if (!time_row(args, name, gpus, per_node)) return 1;
      }
    }
  }
  return 0;
}
