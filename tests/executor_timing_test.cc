// ExecutorOptions::time_compute (what `layerplan predict` measures): time lands on the
// devices that hold a layer's tiles and nowhere else, and timing changes no number.
#include <gtest/gtest.h>

#include "tests/executor_test_util.h"

namespace layerplan::testing {
namespace {

TEST(ExecutorTiming, ComputeTimeLandsOnTheDevicesHoldingEachLayersTiles) {
  const ModelGraph graph = residual_inception_net();
  // Everything on device 0, except conv2 split in samples over devices 1 and 2 and the
  // fully connected layer on device 3.
  std::vector<Configuration> plan = single_device_plan(graph);
  const auto id_of = [&](const std::string& name) {
    for (const Layer& l : graph.layers()) {
      if (l.name == name) return l.id;
    }
    throw std::invalid_argument("no layer " + name);
  };
  const int conv2 = id_of("conv2"), fc = id_of("fc");
  Degrees two_samples;
  two_samples.d[0] = 2;
  plan[static_cast<size_t>(conv2)] = Configuration{two_samples, {1, 2}};
  plan[static_cast<size_t>(fc)] = Configuration{Degrees{}, {3}};
  const auto kernels = make_kernels("reference");
  InProcessTransport transport;
  ExecutorOptions options;
  options.sgd = test_sgd();
  options.time_compute = true;
  Executor executor(graph, plan, *kernels, transport, options);
  const std::vector<Batch> batches = test_batches(graph, 2);
  const double first_loss = executor.step(batches[0].images, batches[0].labels);

  const auto& seconds = executor.compute_seconds();
  ASSERT_EQ(seconds.size(), static_cast<size_t>(graph.size()));
  for (int id = 0; id < graph.size(); ++id) {
    const Configuration& config = plan[static_cast<size_t>(id)];
    ASSERT_EQ(seconds[static_cast<size_t>(id)].size(), 4u);
    for (int d = 0; d < 4; ++d) {
      const bool holds = std::find(config.devices.begin(), config.devices.end(), d) != config.devices.end();
      const double s = seconds[static_cast<size_t>(id)][static_cast<size_t>(d)];
      if (!holds || graph.layer(id).kind == LayerKind::kInput) {
        EXPECT_EQ(s, 0.0) << graph.layer(id).name << " device " << d;
      } else {
        EXPECT_GT(s, 0.0) << graph.layer(id).name << " device " << d;
      }
    }
  }
  executor.reset_compute_seconds();
  for (const auto& layer : executor.compute_seconds()) {
    for (double s : layer) EXPECT_EQ(s, 0.0);
  }
  const double second_loss = executor.step(batches[1].images, batches[1].labels);

  // Timing changes nothing: the same plan untimed trains the same losses and weights.
  InProcessTransport untimed_transport;
  ExecutorOptions untimed_options = options;
  untimed_options.time_compute = false;
  Executor untimed(graph, plan, *kernels, untimed_transport, untimed_options);
  EXPECT_EQ(untimed.step(batches[0].images, batches[0].labels), first_loss);
  EXPECT_EQ(untimed.step(batches[1].images, batches[1].labels), second_loss);
  EXPECT_EQ(untimed.gathered_params(fc).weight, executor.gathered_params(fc).weight);
  for (const auto& layer : untimed.compute_seconds()) {
    for (double s : layer) EXPECT_EQ(s, 0.0);
  }
}

}  // namespace
}  // namespace layerplan::testing
