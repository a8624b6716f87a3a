#pragma once
// A plan filled by hand as the planner fills it when its choice leaves GPUs idle and the
// simplicity margin set a faster plan aside (planner/node_prefixes.h): ResNet-50 at 4 images
// per GPU on 2 nodes of 8 H100 with one 100 Gb/s NIC each, data parallelism on the first
// node chosen. For the tests of what the reports say about it.
#include "model/zoo.h"
#include "planner/node_prefixes.h"
#include "planner/planner.h"
#include "topology/cluster_spec.h"

namespace layerplan::testing_idle {

// `nodes` x 8 H100, 100 Gb/s x 1 NIC, bf16.
inline ClusterSpec one_nic_cluster(int nodes) {
  ClusterSpec spec;
  spec.nodes = nodes;
  spec.gpus_per_node = 8;
  spec.gpu = "h100";
  spec.precision = Precision::kBf16;
  spec.inter_bandwidth_gbits = 100;
  spec.nics_per_node = 1;
  return spec;
}

inline DeviceGraph one_nic_devices(int nodes) { return build_device_graph(one_nic_cluster(nodes)); }

struct IdlePlan {
  DeviceGraph devices = one_nic_devices(2);
  ModelGraph graph = build_zoo_model("resnet50", int64_t{4} * 16);
  Plan plan;

  IdlePlan() {
    const CostModel model(graph, devices, PlanOptions{}.sync_options());
    plan.model = graph.name();
    plan.batch = graph.layer(0).output.n();
    plan.baselines = {price_strategy(model, "data parallel", data_parallel(graph, 16)),
                      price_strategy(model, "model parallel", model_parallel(graph, 16)),
                      price_strategy(model, "owt", one_weird_trick(graph, 16))};
    plan.layer_wise = price_strategy(model, "layer-wise", one_weird_trick(graph, 16));
    plan.chosen = price_strategy(model, "data parallel on 1 node (8 GPUs)", data_parallel(graph, 8));
    record_idle_devices(plan, graph, devices, PlanOptions{});
    plan.space_sizes.assign(static_cast<size_t>(graph.size()), 1);
    plan.min_gain = 0.03;
    plan.set_aside_name = "layer-wise on 1 node (8 GPUs)";
    plan.set_aside_step_s = 0.98 * plan.baselines.front().step_s();
    plan.lower_bound_s = 0.8 * plan.chosen.step_s();
  }
};

}  // namespace layerplan::testing_idle
