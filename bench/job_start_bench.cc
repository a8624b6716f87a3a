// What the SPANK plugin adds to a job step's start on each node, measured in-process with
// the plugin's own functions: discover the node from the hwloc export (restricted to the
// step's GPUs), then plan the job (auto mode, default batch of 32 per GPU), as
// slurm_spank_init_post_opt and slurm_spank_user_init do. Prints a table; the result
// is in docs/BENCHMARKS.md. Target: under 1 s for ResNet-50 on 3 nodes x 4 GPUs.
//   build/bench/job_start_bench [REPETITIONS]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "spank_plugin/step_plan.h"

namespace {

using Clock = std::chrono::steady_clock;

double ms(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::milli>(b - a).count(); }

struct Case {
  const char* model;
  int nodes;
};

}  // namespace

int main(int argc, char** argv) {
  using namespace layerplan;
  const int reps = argc > 1 ? std::max(1, std::atoi(argv[1])) : 20;
  AdminConfig config;
  config.slurm.topology_xml =
      std::string(LAYERPLAN_SOURCE_DIR) + "/tests/data/topologies/flux-dell-xe8640-4xh100-nvlink-4xndr.xml";
  GpuEnvironment env;
  env.slurm_step_gpus = "0-3";
  std::printf("%-13s %5s %5s %12s %12s %12s %12s\n", "model", "nodes", "GPUs", "topology ms", "plan ms", "total med",
              "total max");
  for (const Case c : {Case{"resnet50", 1}, Case{"resnet50", 3}, Case{"resnet101", 3}, Case{"inception_v3", 3}}) {
    std::vector<double> topo, plan, total;
    spank::StepRequest request;
    request.off = false;
    request.mode = "auto";
    request.model = c.model;
    for (int i = 0; i < reps; ++i) {
      const Clock::time_point t0 = Clock::now();
      const NodeTopology node = spank::discover_step_node(config, env);
      const Clock::time_point t1 = Clock::now();
      const spank::StepPlan p = spank::plan_step(request, node, c.nodes, config);
      const Clock::time_point t2 = Clock::now();
      if (p.json.empty()) return 1;
      topo.push_back(ms(t0, t1));
      plan.push_back(ms(t1, t2));
      total.push_back(ms(t0, t2));
    }
    const auto median = [](std::vector<double> v) {
      std::sort(v.begin(), v.end());
      return v[v.size() / 2];
    };
    std::printf("%-13s %5d %5d %12.1f %12.1f %12.1f %12.1f\n", c.model, c.nodes, 4 * c.nodes, median(topo),
                median(plan), median(total), *std::max_element(total.begin(), total.end()));
  }
  return 0;
}
