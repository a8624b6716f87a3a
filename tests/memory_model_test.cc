// Memory per device: the prediction of a tiny plan equals the executor's allocations counted
// by hand; a layer's lower bound never exceeds the whole plan's peak on its devices; with
// a GPU memory too small for the unconstrained optimum, the plan chosen always fits (or the
// planner says that nothing does, naming the smallest memory a plan it priced needs).
#include "planner/memory_model.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "common/error.h"
#include "model/geometry.h"
#include "model/layer_math.h"
#include "model/zoo.h"
#include "planner/memory_fit.h"
#include "planner/planner.h"
#include "tests/cli_harness.h"
#include "topology/admin_config.h"
#include "topology/cluster_spec.h"

namespace layerplan {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

Configuration on_devices(Degrees degrees, int first_device = 0) {
  Configuration c{degrees, {}};
  for (int t = 0; t < degrees.product(); ++t) c.devices.push_back(first_device + t);
  return c;
}

Degrees split(int n, int c = 1) {
  Degrees d;
  d.d[0] = n;
  d.d[1] = c;
  return d;
}

// Whether `layer` can be split by `degrees` (rule 1 and 2 of docs/planner.md).
bool fits_layer(const Layer& layer, const Degrees& degrees) {
  const auto dims = splittable_dims(layer.kind);
  for (int d = 0; d < kNumDims; ++d) {
    if (degrees[d] > 1 && (!dims[static_cast<size_t>(d)] || layer.output[d] % degrees[d] != 0)) return false;
  }
  return true;
}

// input 2x3 -> fully connected 4 (with bias) -> loss, on one device.
ModelGraph tiny_classifier() {
  ModelGraph g("tiny");
  const int x = g.input("x", Shape{{2, 3, 1, 1}});
  g.softmax_cross_entropy("loss", g.fully_connected("fc", x, 4));
  return g;
}

TEST(MemoryModel, TinyPlanOnOneDeviceCountsWhatTheExecutorAllocates) {
  const ModelGraph g = tiny_classifier();
  const std::vector<Configuration> plan(3, on_devices(split(1)));
  const PlanMemory m = predict_plan_memory(g, plan, 1, 4);
  // Elements: fc parameters 4*3+4 = 16 and their momentum 16 (32 resident); forward: the
  // input tile 6, fc's output 8, the loss's probabilities 8 (54); backward of the loss: its
  // output gradient 8 and its input gradient 8, handed to fc (70), then its output and
  // gradient freed (54); of fc: the weight gradient 16 and the input gradient 6 (76), and
  // before the update the weight and bias are flattened into one new buffer of 16 (92).
  ASSERT_EQ(m.devices.size(), 1u);
  EXPECT_EQ(m.devices[0].parameters, 16 * 4);
  EXPECT_EQ(m.devices[0].momentum, 16 * 4);
  EXPECT_EQ(m.devices[0].workspace, 0);
  EXPECT_EQ(m.devices[0].activations, (6 + 8 + 8) * 4);
  EXPECT_EQ(m.devices[0].peak, 92 * 4);
  EXPECT_EQ(m.peak(), 92 * 4);
}

TEST(MemoryModel, MomentumOffLeavesItsBuffersOut) {
  const ModelGraph g = tiny_classifier();
  const std::vector<Configuration> plan(3, on_devices(split(1)));
  MemoryModelOptions options;
  options.momentum = false;
  const PlanMemory m = predict_plan_memory(g, plan, 1, 4, options);
  EXPECT_EQ(m.devices[0].momentum, 0);
  EXPECT_EQ(m.devices[0].peak, (92 - 16) * 4);
}

TEST(MemoryModel, ShardingTheClassifierDividesItsParametersAndAnIdleDeviceHoldsNone) {
  const ModelGraph g = build_zoo_model("alexnet", 16);
  // Data parallel on devices 0-1 of 3, the classifier split by channels over them.
  std::vector<Configuration> plan;
  for (const Layer& l : g.layers()) {
    const bool classifier = l.kind == LayerKind::kFullyConnected;
    plan.push_back(on_devices(classifier ? split(1, 2) : split(2)));
  }
  const PlanMemory m = predict_plan_memory(g, plan, 3, 4);
  int64_t sharded = 0, replicated = 0;
  for (const Layer& l : g.layers()) {
    (l.kind == LayerKind::kFullyConnected ? sharded : replicated) += parameter_count(g, l);
  }
  EXPECT_EQ(m.devices[0].parameters, 4 * (replicated + sharded / 2));
  EXPECT_EQ(m.devices[1].parameters, m.devices[0].parameters);
  EXPECT_EQ(m.devices[2].peak, 0);
  EXPECT_EQ(m.peak_device(), 0);
}

// Every layer's bound, for its configuration in a whole plan, is at most the plan's
// predicted peak on each of its devices.
void expect_bounds_below_peaks(const ModelGraph& g, const std::vector<Configuration>& plan, int devices) {
  const PlanMemory m = predict_plan_memory(g, plan, devices, 4);
  for (const Layer& l : g.layers()) {
    const Configuration& c = plan[static_cast<size_t>(l.id)];
    const int64_t bound = layer_memory_lower_bound(g, l, c, 4);
    for (int d : c.devices) EXPECT_LE(bound, m.devices[static_cast<size_t>(d)].peak) << l.name << " " << c.str();
  }
}

TEST(MemoryModel, LayerBoundNeverExceedsTheWholePlansPeak) {
  for (const char* name : {"vgg16", "resnet50", "inception_v3"}) {
    SCOPED_TRACE(name);
    const ModelGraph g = build_zoo_model(name, 8);
    expect_bounds_below_peaks(g, data_parallel(g, 4), 4);
    expect_bounds_below_peaks(g, model_parallel(g, 4), 4);
    expect_bounds_below_peaks(g, one_weird_trick(g, 4), 4);
    expect_bounds_below_peaks(g, std::vector<Configuration>(static_cast<size_t>(g.size()), on_devices(split(1))), 4);
  }
}

// Per device, received plus sent elements by enumerating overlapping tile pairs.
std::vector<int64_t> exchange_by_pairs(const ModelGraph& g, const Layer& consumer, int slot, const Configuration& p,
                                       const Configuration& q, int devices) {
  std::vector<int64_t> held(static_cast<size_t>(devices), 0);
  for_each_transfer(g, consumer, slot, p, q, [&](int src, int dst, int64_t elements) {
    held[static_cast<size_t>(src)] += elements;
    held[static_cast<size_t>(dst)] += elements;
  });
  return held;
}

// Every edge of a model under every pair of a few configurations, placed on shifted device
// blocks so that some tiles share a device and some do not.
TEST(MemoryModel, ExchangeVolumesEqualThePairEnumeration) {
  const std::vector<Degrees> degrees = {split(1), split(2), split(4), split(1, 2), split(2, 2), [] {
                                          Degrees d;
                                          d.d[2] = 2;
                                          d.d[3] = 2;
                                          return d;
                                        }()};
  for (const char* name : {"resnet50", "inception_v3"}) {
    SCOPED_TRACE(name);
    const ModelGraph g = build_zoo_model(name, 8);
    int compared = 0;
    for (const Layer& l : g.layers()) {
      if (l.id > 40) break;  // the stem and first blocks: convs with halos, pools, concat and add
      for (int slot = 0; slot < static_cast<int>(l.inputs.size()); ++slot) {
        const Layer& producer = g.layer(l.inputs[static_cast<size_t>(slot)]);
        for (const Degrees& pd : degrees) {
          for (const Degrees& qd : degrees) {
            if (!fits_layer(producer, pd) || !fits_layer(l, qd)) continue;
            const Configuration p = on_devices(pd, 1), q = on_devices(qd);
            EXPECT_EQ(exchange_elements(g, l, slot, p, q, 5), exchange_by_pairs(g, l, slot, p, q, 5))
                << l.name << " slot " << slot << ": " << p.str() << " -> " << q.str();
            ++compared;
          }
        }
      }
    }
    EXPECT_GT(compared, 100);
  }
}

DeviceGraph h100s(int gpus, double memory_gib) {
  ClusterSpec spec;
  spec.gpu = "h100";
  spec.gpus_per_node = std::min(gpus, 4);
  spec.nodes = gpus / spec.gpus_per_node;
  spec.gpu_memory_gib = memory_gib;
  spec.gpu_memory_reserve_gib = 0;
  return build_device_graph(spec);
}

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// Planning with memory below the unconstrained optimum's peak: the plan chosen fits, or the
// planner refuses with the "fits no plan" line.
// VGG-16's fastest plan on 4 H100 (batch 4) needs more memory than the searched layer-wise
// plan; below it, a slower plan is chosen.
TEST(MemoryFit, APlanOverMemoryIsNeverChosen) {
  const ModelGraph g = build_zoo_model("vgg16", 4);
  const Plan free_plan = make_plan(g, h100s(4, 10000));
  const double free_peak = static_cast<double>(free_plan.chosen.memory.peak());
  int changed = 0, refused = 0;
  for (double fraction : {1.0, 0.98, 0.95, 0.9, 0.85, 0.8, 0.6, 0.2}) {
    SCOPED_TRACE(fraction);
    const DeviceGraph devices = h100s(4, fraction * free_peak / kGiB);
    try {
      const Plan plan = make_plan(g, devices);
      EXPECT_LE(plan.chosen.memory.peak(), plan.usable_memory_bytes);
      // The reported figure is the model's for the configurations chosen.
      std::vector<Configuration> configs;
      for (const LayerCost& row : plan.chosen.layers) configs.push_back(row.config);
      EXPECT_EQ(predict_plan_memory(g, configs, 4, 4).peak(), plan.chosen.memory.peak());
      changed += plan.chosen.memory.peak() != free_plan.chosen.memory.peak() ? 1 : 0;
    } catch (const UsageError& e) {
      EXPECT_THAT(e.what(), HasSubstr("fits no plan"));
      ++refused;
    }
  }
  EXPECT_GT(changed, 0) << "no limit changed the plan: the test would not notice an unchecked limit";
  EXPECT_GT(refused, 0);
}

// On 16 GPUs, VGG-16's first convolutions on one GPU need many times what the whole
// optimum needs on each: with the optimum's memory, the search excludes them and still
// finds a plan that fits. (The optimum's memory: enough for the searched plan and for the
// chosen one, a mix of it with data parallelism here, planner/mixed_candidates.h.)
TEST(MemoryFit, ConfigurationsTooLargeForOneGpuAreExcludedFromTheSearch) {
  const ModelGraph g = build_zoo_model("vgg16", 256);
  const Plan free_plan = make_plan(g, h100s(16, 10000));
  EXPECT_EQ(free_plan.excluded_configurations, 0);
  const int64_t optimum_peak = std::max(free_plan.chosen.memory.peak(), free_plan.layer_wise.memory.peak());
  const Plan tight = make_plan(g, h100s(16, static_cast<double>(optimum_peak) / kGiB));
  EXPECT_GT(tight.excluded_configurations, 0);
  EXPECT_LE(tight.chosen.memory.peak(), tight.usable_memory_bytes);
  EXPECT_EQ(tight.chosen.step_s(), free_plan.chosen.step_s());
}

TEST(MemoryFit, NothingFitsNamesTheSmallestMemoryAPlanNeeds) {
  const ModelGraph g = build_zoo_model("vgg16", 64);
  try {
    make_plan(g, h100s(4, 0.25));
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), StartsWith("vgg16 at batch 64 fits no plan on 4 "));
    EXPECT_THAT(e.what(), HasSubstr("(0.25 GiB per GPU, 0.00 GiB reserved): the smallest plan priced needs "));
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
  }
}

TEST(MemoryFit, UnknownMemoryChecksNothing) {
  Device d;
  EXPECT_EQ(usable_memory_bytes(d), INT64_MAX);
  d.memory_bytes = 16.0 * kGiB;
  d.memory_reserve_bytes = 2.0 * kGiB;
  EXPECT_EQ(usable_memory_bytes(d), int64_t{14} << 30);
}

TEST(MemoryConfig, ClusterFileSetsTheMemoryAndTheReserve) {
  const ClusterSpec spec =
      cluster_from_toml("[cluster]\ngpu = \"h100\"\ngpu_memory_gib = 40\ngpu_memory_reserve_gib = 1.5\n", "c.toml");
  const Device d = build_device_graph(spec).device();
  EXPECT_EQ(d.memory_bytes, 40.0 * kGiB);
  EXPECT_EQ(d.memory_reserve_bytes, 1.5 * kGiB);
  EXPECT_EQ(build_device_graph(ClusterSpec{}).device().memory_reserve_bytes, kDefaultMemoryReserveGib * kGiB);
  EXPECT_THROW(cluster_from_toml("[cluster]\ngpu_memory_reserve_gib = -1\n", "c.toml"), UsageError);
  EXPECT_THROW(cluster_from_toml("[cluster]\ngpu_memory_gib = 0\n", "c.toml"), UsageError);
}

TEST(MemoryConfig, AdminConfigSetsTheReserveOfDiscoveredNodes) {
  EXPECT_EQ(admin_config_from_toml("", "a.toml").node.gpu_memory_reserve_gib, kDefaultMemoryReserveGib);
  EXPECT_EQ(admin_config_from_toml("[node]\ngpu_memory_reserve_gib = 3\n", "a.toml").node.gpu_memory_reserve_gib, 3.0);
  EXPECT_THROW(admin_config_from_toml("[node]\ngpu_memory_reserve_gib = -1\n", "a.toml"), UsageError);
}

using testing_cli::run;

TEST(MemoryCli, PlanPrintsMemoryPerGpuBesideTheStepTime) {
  const auto r = run({"plan", "--model", "alexnet", "--gpus", "4", "--gpu", "h100"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("memory per GPU, predicted peak in GiB (usable 78.00 = 80.00 less 2.00 reserved)"));
  EXPECT_THAT(r.out, HasSubstr("data parallel"));
}

TEST(MemoryCli, AModelThatFitsNoPlanIsOneLineAndExitTwo) {
  const auto r = run({"plan", "--model", "vgg16", "--gpus", "4", "--gpu", "h100", "--gpu-memory-gib", "0.25",
                      "--memory-reserve-gib", "0"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, StartsWith("layerplan: vgg16 at batch 128 fits no plan on 4 "));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

}  // namespace
}  // namespace layerplan
