#pragma once
// Helpers of the executor tests: a small net with a residual block and an Inception-style
// concat, the plans to run (baselines, the layer-wise plan, random valid plans), and a
// driver that trains a plan for a few SGD steps with the reference kernels in one process.
#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "planner/config_space.h"
#include "planner/planner.h"
#include "runtime/executor/executor.h"
#include "runtime/executor/in_process_transport.h"
#include "tests/kernels_test_util.h"
#include "topology/cluster_spec.h"

namespace layerplan::testing {

// conv-bn-relu, a residual block (conv-bn + identity, add), an Inception-style block
// (1x1 conv, 3x3 conv, 3x3 average pool, concatenated), max pool, global average pool,
// dropout, fully connected, loss. 4 x 3 x 8 x 8 input, 10 classes.
inline ModelGraph residual_inception_net(int64_t batch = 4) {
  ModelGraph g("residual_inception");
  const int x = g.input("data", Shape{{batch, 3, 8, 8}});
  const int r1 = g.relu("relu1", g.batch_norm("bn1", g.conv2d("conv1", x, 8, Window::square(3, 1, 1), false)));
  const int b2 = g.batch_norm("bn2", g.conv2d("conv2", r1, 8, Window::square(3, 1, 1), false));
  const int r2 = g.relu("relu2", g.add("residual", {b2, r1}));
  const int i1 = g.conv2d("inc_1x1", r2, 4, Window::square(1), true);
  const int i2 = g.conv2d("inc_3x3", r2, 4, Window::square(3, 1, 1), true);
  const int i3 = g.avg_pool("inc_pool", r2, Window::square(3, 1, 1));
  const int cat = g.concat("inc_concat", {i1, i2, i3});
  const int p = g.max_pool("pool", cat, Window::square(2, 2));
  const int d = g.dropout("dropout", g.global_avg_pool("gap", p));
  g.softmax_cross_entropy("loss", g.fully_connected("fc", d, 10));
  return g;
}

inline std::vector<Configuration> single_device_plan(const ModelGraph& graph) {
  return std::vector<Configuration>(static_cast<size_t>(graph.size()), Configuration{Degrees{}, {0}});
}

// make_plan on one node of `devices` GPUs made so slow (1e-5 of peak, free links) that
// splitting pays even on these tiny nets; on the paper's P100s the plan is one device.
inline std::vector<Configuration> layer_wise_plan(const ModelGraph& graph, int devices) {
  ClusterSpec spec;
  spec.nodes = 1;
  spec.gpus_per_node = devices;
  spec.compute_efficiency = 1e-5;
  spec.kernel_overhead_us = 0;
  spec.intra_bandwidth_gbytes = 1e4;
  spec.intra_latency_us = 0;
  const Plan plan = make_plan(graph, build_device_graph(spec));
  std::vector<Configuration> configs;
  for (const LayerCost& layer : plan.layer_wise.layers) configs.push_back(layer.config);  // the searched plan
  return configs;
}

// Every layer gets a configuration drawn from the planner's space on one node of
// `devices` GPUs (any aligned block), with its devices shuffled: the executor must not
// depend on which device holds which tile.
inline std::vector<Configuration> random_plan(const ModelGraph& graph, int devices, std::mt19937& rng) {
  std::vector<Configuration> plan;
  for (const Layer& layer : graph.layers()) {
    const std::vector<Configuration> space =
        enumerate_configurations(layer, devices, devices, SpaceOptions{PlacementRule::kAlignedBlocks});
    Configuration c = space[std::uniform_int_distribution<size_t>(0, space.size() - 1)(rng)];
    std::shuffle(c.devices.begin(), c.devices.end(), rng);
    plan.push_back(std::move(c));
  }
  return plan;
}

struct NamedPlan {
  std::string name;
  std::vector<Configuration> configs;
};

// Data parallel, model parallel, OWT, layer-wise and `random` random plans.
inline std::vector<NamedPlan> plans_to_test(const ModelGraph& graph, int devices, int random, uint32_t seed) {
  std::vector<NamedPlan> plans = {{"data parallel", data_parallel(graph, devices)},
                                  {"model parallel", model_parallel(graph, devices)},
                                  {"owt", one_weird_trick(graph, devices)},
                                  {"layer-wise", layer_wise_plan(graph, devices)}};
  std::mt19937 rng(seed);
  for (int i = 0; i < random; ++i) plans.push_back({"random " + std::to_string(i), random_plan(graph, devices, rng)});
  return plans;
}

inline SgdOptions test_sgd() { return {.lr = 0.05, .momentum = 0.9, .weight_decay = 1e-3}; }

struct Batch {
  Tensor images;
  std::vector<int64_t> labels;
};

// The same `count` random batches for every plan.
inline std::vector<Batch> test_batches(const ModelGraph& graph, int count) {
  std::mt19937 rng(2018);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const Shape& in = graph.layer(0).output;
  const int64_t classes = graph.layer(graph.size() - 1).output.c();
  std::vector<Batch> batches;
  for (int i = 0; i < count; ++i) {
    std::vector<float> v(static_cast<size_t>(in.elements()));
    for (float& x : v) x = normal(rng);
    Batch b{Tensor(Box::whole(in), std::move(v)), {}};
    for (int64_t n = 0; n < in.n(); ++n)
      b.labels.push_back(std::uniform_int_distribution<int64_t>(0, classes - 1)(rng));
    batches.push_back(std::move(b));
  }
  return batches;
}

struct TrainResult {
  std::vector<double> losses;       // per step
  std::vector<LayerParams> params;  // per layer (empty for kinds without parameters)
  TrafficCounts traffic;
};

// Trains `plan` for `steps` steps in one process with `options` (optimizer, clipping,
// label smoothing, bucket size), with the reference kernels unless `backend` says "onednn".
inline TrainResult train_with(const ModelGraph& graph, const std::vector<Configuration>& plan, int steps,
                              const ExecutorOptions& options, std::string_view backend = "reference") {
  static const auto reference = make_kernels("reference");
  static const auto onednn = make_kernels("onednn", 1);
  Kernels* kernels = backend == "onednn" ? onednn.get() : reference.get();
  InProcessTransport transport;
  Executor executor(graph, plan, *kernels, transport, options);
  TrainResult r;
  for (const Batch& b : test_batches(graph, steps)) r.losses.push_back(executor.step(b.images, b.labels));
  for (const Layer& layer : graph.layers()) {
    r.params.push_back(has_params(layer.kind) ? executor.gathered_params(layer.id) : LayerParams{});
  }
  r.traffic = transport.counts();
  return r;
}

// Trains `plan` for `steps` SGD steps in one process, with the reference kernels unless
// `backend` says "onednn", reducing weight gradients in buckets of `bucket_bytes`.
inline TrainResult train(const ModelGraph& graph, const std::vector<Configuration>& plan, int steps,
                         const SgdOptions& sgd = test_sgd(), std::string_view backend = "reference",
                         int64_t bucket_bytes = ExecutorOptions{}.gradient_bucket_bytes) {
  ExecutorOptions options;
  options.sgd = sgd;
  options.gradient_bucket_bytes = bucket_bytes;
  return train_with(graph, plan, steps, options, backend);
}

// The largest relative difference between two runs: per-step losses, and every
// parameter tensor (weight, bias, batch-norm running statistics).
inline double max_difference(const TrainResult& got, const TrainResult& want) {
  double worst = got.losses.size() == want.losses.size() ? 0.0 : INFINITY;
  for (size_t i = 0; i < std::min(got.losses.size(), want.losses.size()); ++i) {
    worst = std::max(worst, std::abs(got.losses[i] - want.losses[i]) / std::abs(want.losses[i]));
  }
  for (size_t id = 0; id < want.params.size(); ++id) {
    const LayerParams &g = got.params[id], &w = want.params[id];
    worst = std::max({worst, relative_error(g.weight, w.weight), relative_error(g.bias, w.bias),
                      relative_error(g.running_mean, w.running_mean), relative_error(g.running_var, w.running_var)});
  }
  return worst;
}

}  // namespace layerplan::testing
