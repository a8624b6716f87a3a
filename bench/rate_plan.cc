// Prices a plan file (for example one an earlier version of layerplan wrote) with this
// version's cost model: the step by the timeline, with and without overlap, and the
// search's additive objective. docs/BENCHMARKS.md uses it to state what the search gains
// or loses against the previous version's plan, both rated by the same model.
//
//   build/bench/rate_plan PLAN.json [--gpu p100] [--gpus-per-node 4] [--inter-bw 100]
//                         [--nics-per-node 1] [--sync ring|ps]
//
// The cluster is the plan's device count in nodes of --gpus-per-node.
#include <cstdio>
#include <string>

#include "model/plan_file.h"
#include "planner/planner.h"
#include "topology/cluster_spec.h"

namespace {

using namespace layerplan;

void print_rating(const char* what, const StrategyCost& s) {
  std::printf("%-12s step %9.2f ms  additive %9.2f ms  compute %9.2f  transfer %8.2f  sync %8.2f  exposed %7.2f\n",
              what, s.step_s() * 1e3, s.additive_s() * 1e3, s.compute_s * 1e3, s.transfer_s * 1e3,
              s.timeline.sync_s * 1e3, s.timeline.exposed_sync_s * 1e3);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: rate_plan PLAN.json [--gpu G] [--gpus-per-node N] [--inter-bw Gb/s] "
                 "[--nics-per-node N] [--sync ring|ps]\n");
    return 2;
  }
  ClusterSpec spec;
  SyncScheme scheme = SyncScheme::kRingAllReduce;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--gpu") {
      spec.gpu = value;
    } else if (flag == "--gpus-per-node") {
      spec.gpus_per_node = std::stoi(value);
    } else if (flag == "--inter-bw") {
      spec.inter_bandwidth_gbits = std::stod(value);
    } else if (flag == "--nics-per-node") {
      spec.nics_per_node = std::stoi(value);
    } else if (flag == "--sync" && (value == "ring" || value == "ps")) {
      scheme = value == "ps" ? SyncScheme::kParameterServer : SyncScheme::kRingAllReduce;
    } else {
      std::fprintf(stderr, "rate_plan: unknown flag or value %s %s\n", flag.c_str(), value.c_str());
      return 2;
    }
  }
  try {
    const PlanFile file = read_plan_file(std::string(argv[1]));
    const ModelAndPlan plan = model_and_plan(file, std::nullopt, {});
    spec.gpus_per_node = std::min(spec.gpus_per_node, file.devices);
    spec.nodes = file.devices / spec.gpus_per_node;
    const DeviceGraph devices = build_device_graph(spec);
    for (const bool overlap : {true, false}) {
      const CostModel model(plan.graph, devices, SyncOptions{scheme, overlap});
      print_rating(overlap ? "overlap on" : "overlap off", price_strategy(model, file.strategy, plan.plan));
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rate_plan: %s\n", e.what());
    return 2;
  }
  return 0;
}
