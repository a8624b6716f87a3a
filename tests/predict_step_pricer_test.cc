// The step-timing model as a library (predict/), without the binary: the prediction is its
// terms' sum, every message costs the link's figure for its gap once, a one-device plan
// communicates nothing, batch-norm statistics are reduced halfway through each pass, and
// moves are shaped one way or both ways by who sends to whom.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>

#include "common/error.h"
#include "model/zoo.h"
#include "predict/measurement.h"
#include "predict/message_clock.h"
#include "predict/move_shape.h"
#include "predict/step_pricer.h"

namespace layerplan {
namespace {

using ::testing::HasSubstr;

std::vector<Configuration> on_devices(const ModelGraph& graph, Degrees degrees, std::vector<int> devices) {
  return std::vector<Configuration>(static_cast<size_t>(graph.size()), Configuration{degrees, std::move(devices)});
}

std::vector<Configuration> data_parallel(const ModelGraph& graph, int devices) {
  std::vector<int> all(static_cast<size_t>(devices));
  for (int d = 0; d < devices; ++d) all[static_cast<size_t>(d)] = d;
  return on_devices(graph, Degrees{{devices, 1, 1, 1}}, all);
}

// Every layer 1 ms + 0.1 ms per position in the graph, 40 % of it forward.
MeasuredSteps measured_for(const ModelGraph& graph) {
  MeasuredSteps m;
  for (int id = 0; id < graph.size(); ++id) {
    m.compute_s.push_back(1e-3 + 1e-4 * id);
    m.forward_s.push_back(0.4 * m.compute_s.back());
  }
  m.overhead_s = 2e-4;
  m.data_s = 1e-4;
  return m;
}

LinkFigures constant_link(double gbytes, double latency_s) {
  LinkFigures link;
  link.gbytes = gbytes;
  link.latency_s = latency_s;
  return link;
}

double communication(const StepPrediction& p) { return p.transfer_s + p.sync_s; }

TEST(StepPricer, TheStepIsTheSumOfItsTermsAndTheLayersAddUp) {
  const ModelGraph graph = build_zoo_model("lenet5", 32);
  const std::vector<Configuration> plan = data_parallel(graph, 2);
  const MeasuredSteps measured = measured_for(graph);
  const StepPrediction p = predict_step(graph, plan, 2, measured, constant_link(1, 1e-4));
  EXPECT_DOUBLE_EQ(p.step_s, p.compute_s + p.overhead_s + p.data_s + p.transfer_s + p.sync_s);
  ASSERT_EQ(p.layers.size(), static_cast<size_t>(graph.size()));
  double compute = 0, sync = p.weight_sync_s + p.loss_sync_s;
  for (size_t id = 0; id < p.layers.size(); ++id) {
    EXPECT_EQ(p.layers[id].layer, graph.layer(static_cast<int>(id)).name);
    EXPECT_EQ(p.layers[id].compute_s, measured.compute_s[id]);
    EXPECT_EQ(p.layers[id].forward_s, measured.forward_s[id]);
    compute += p.layers[id].compute_s;
    sync += p.layers[id].sync_s;
  }
  EXPECT_DOUBLE_EQ(p.compute_s, compute);
  EXPECT_DOUBLE_EQ(p.sync_s, sync);
  EXPECT_EQ(p.overhead_s, measured.overhead_s);
  EXPECT_EQ(p.data_s, measured.data_s);
}

// Data parallel: nothing moves between layers; the weights' ring (2(p-1) messages per
// bucket) and the loss (one message) are all there is.
TEST(StepPricer, DataParallelSendsTheRingsAndTheLoss) {
  const ModelGraph graph = build_zoo_model("lenet5", 32);
  const std::vector<Configuration> plan = data_parallel(graph, 2);
  const StepPricer pricer(graph, plan, 2, constant_link(1, 1e-4));
  const StepPrediction p = pricer.price(measured_for(graph));
  EXPECT_EQ(p.transfer_s, 0);
  EXPECT_GT(p.weight_sync_s, 0);
  EXPECT_GT(p.loss_sync_s, 0);
  EXPECT_EQ(p.buckets, pricer.buckets().size());
  EXPECT_EQ(p.messages, 1 + 2 * static_cast<double>(p.buckets));
  // A pricer prices any number of measurements.
  EXPECT_EQ(pricer.price(measured_for(graph)).step_s, p.step_s);
}

// With overlap (`train --overlap on`) the rings of the buckets issued during the backward
// run beside it: the step is still the sum of its terms, the same messages are priced, the
// weight gradients' exposed part shrinks by the part hidden, and the step is shorter than
// the blocking one by at most the rings' time. AlexNet's fully connected weights fill
// several buckets, issued as the backward reaches them.
TEST(StepPricer, OverlapHidesTheRingsIssuedDuringTheBackward) {
  const ModelGraph graph = build_zoo_model("alexnet", 4);
  const std::vector<Configuration> plan = data_parallel(graph, 2);
  const MeasuredSteps measured = measured_for(graph);
  const StepPricer blocking(graph, plan, 2, constant_link(1, 1e-4));
  const StepPricer overlapped(graph, plan, 2, constant_link(1, 1e-4), true);
  ASSERT_GT(blocking.buckets().size(), 2u);
  ASSERT_GE(blocking.buckets().front().reduce_after_layer, 0);  // issued during the backward
  const StepPrediction off = blocking.price(measured), on = overlapped.price(measured);
  EXPECT_FALSE(off.overlap);
  EXPECT_TRUE(on.overlap);
  EXPECT_EQ(off.weight_sync_hidden_s, 0);
  EXPECT_GT(on.weight_sync_hidden_s, 0);
  EXPECT_DOUBLE_EQ(on.step_s, on.compute_s + on.overhead_s + on.data_s + on.transfer_s + on.sync_s);
  EXPECT_EQ(on.messages, off.messages);
  EXPECT_LT(on.weight_sync_s, off.weight_sync_s);
  EXPECT_LT(on.step_s, off.step_s);
  EXPECT_GE(on.step_s, off.step_s - off.weight_sync_s - 1e-12);
  EXPECT_DOUBLE_EQ(on.compute_s, off.compute_s);
  EXPECT_DOUBLE_EQ(on.transfer_s, off.transfer_s);

  // LeNet-5's weights fill one bucket, due after the whole backward: nothing to hide.
  const ModelGraph lenet = build_zoo_model("lenet5", 32);
  const std::vector<Configuration> lenet_plan = data_parallel(lenet, 2);
  const StepPrediction a = predict_step(lenet, lenet_plan, 2, measured_for(lenet), constant_link(1, 1e-4));
  const StepPrediction b = predict_step(lenet, lenet_plan, 2, measured_for(lenet), constant_link(1, 1e-4), true);
  EXPECT_DOUBLE_EQ(b.step_s, a.step_s);
  EXPECT_NEAR(b.weight_sync_hidden_s, 0, 1e-15);  // the rings less what is exposed, rounded
}

TEST(StepPricer, EveryMessageCostsTheLatencyOnce) {
  const ModelGraph graph = build_zoo_model("lenet5", 32);
  const std::vector<Configuration> plan = data_parallel(graph, 4);
  const MeasuredSteps measured = measured_for(graph);
  const StepPrediction low = predict_step(graph, plan, 4, measured, constant_link(1, 1e-4));
  const StepPrediction high = predict_step(graph, plan, 4, measured, constant_link(1, 1.1e-3));
  EXPECT_EQ(high.messages, low.messages);
  EXPECT_NEAR(communication(high) - communication(low), low.messages * 1e-3, 1e-12);
}

TEST(StepPricer, OneDeviceCommunicatesNothing) {
  const ModelGraph graph = build_zoo_model("lenet5", 32);
  const StepPrediction p =
      predict_step(graph, on_devices(graph, Degrees{}, {0}), 1, measured_for(graph), constant_link(1, 1e-4));
  EXPECT_EQ(p.messages, 0);
  EXPECT_EQ(communication(p), 0);
  EXPECT_DOUBLE_EQ(p.step_s, p.compute_s + p.overhead_s + p.data_s);
}

// The forward part is never more than the layer's compute.
TEST(StepPricer, TheForwardPartIsAtMostTheCompute) {
  const ModelGraph graph = build_zoo_model("lenet5", 32);
  MeasuredSteps measured = measured_for(graph);
  measured.forward_s[1] = 2 * measured.compute_s[1];
  const StepPrediction p = predict_step(graph, on_devices(graph, Degrees{}, {0}), 1, measured, constant_link(1, 1e-4));
  EXPECT_EQ(p.layers[1].forward_s, measured.compute_s[1]);
}

// A batch norm split by samples reduces its statistics forward and backward: two messages
// of the layer's own, each after half of its pass's compute.
TEST(StepPricer, BatchNormStatisticsAreTheLayersMessages) {
  ModelGraph graph("bn");
  const int x = graph.input("data", Shape{{8, 4, 6, 6}});
  const int bn = graph.batch_norm("bn", graph.conv2d("conv", x, 4, Window::square(3, 1, 1), false));
  graph.softmax_cross_entropy("loss", graph.fully_connected("fc", graph.flatten("flat", bn), 10));
  const StepPrediction p = predict_step(graph, data_parallel(graph, 2), 2, measured_for(graph), constant_link(1, 1e-4));
  const LayerPrediction& layer = p.layers[static_cast<size_t>(bn)];
  EXPECT_EQ(layer.messages, 2);
  EXPECT_GT(layer.sync_s, 2 * 1e-4);
  EXPECT_EQ(layer.transfer_s, 0);
}

TEST(StepPricer, RefusesMeasurementsOfAnotherGraph) {
  const ModelGraph graph = build_zoo_model("lenet5", 32);
  MeasuredSteps measured = measured_for(graph);
  measured.compute_s.pop_back();
  EXPECT_THROW(predict_step(graph, data_parallel(graph, 2), 2, measured, constant_link(1, 1e-4)),
               std::invalid_argument);
}

// The measurement in one process: every layer's compute on its slowest device, the forward
// part within it, and this process reports.
TEST(MeasureCompute, InOneProcessEveryLayerHasItsCompute) {
  const ModelGraph graph = build_zoo_model("lenet5", 8);
  MeasureOptions options;
  options.steps = 2;
  const MeasuredSteps m = measure_compute(graph, data_parallel(graph, 2), 2, options);
  ASSERT_EQ(m.compute_s.size(), static_cast<size_t>(graph.size()));
  ASSERT_EQ(m.forward_s.size(), m.compute_s.size());
  double compute = 0;
  for (size_t id = 0; id < m.compute_s.size(); ++id) {
    EXPECT_GE(m.compute_s[id], 0);
    EXPECT_GE(m.forward_s[id], 0);
    compute += m.compute_s[id];
  }
  EXPECT_GT(compute, 0);
  EXPECT_GE(m.overhead_s, 0);
  EXPECT_TRUE(m.reports);
  options.steps = 1;
  EXPECT_THROW(measure_compute(graph, data_parallel(graph, 2), 2, options), UsageError);
}

// The figure of a message is that of the compute gap before it; ring steps after the first
// follow no gap, and rings that start together all follow it.
TEST(MessageClock, AMessageCostsTheFigureOfItsGap) {
  LinkFigures link = constant_link(1, 1e-4);
  link.latency_by_gap = {{0, 1e-4}, {1e-3, 1.1e-3}};
  MessageClock clock(link, 2);
  clock.compute(1e-3);
  EXPECT_DOUBLE_EQ(clock.message(0, 64), 1.1e-3);
  EXPECT_DOUBLE_EQ(clock.message(1, 64), 1e-4);  // back to back
  clock.compute(5e-4);
  EXPECT_DOUBLE_EQ(clock.ring_step(true), 6e-4);
  EXPECT_DOUBLE_EQ(clock.ring_step(false), 1e-4);
  EXPECT_DOUBLE_EQ(clock.ring_step(true), 6e-4);  // another ring starting with the first
  clock.forget_gap();
  EXPECT_DOUBLE_EQ(clock.message(2, 64), 1e-4);  // no layer's
  EXPECT_EQ(clock.messages(), 6);
  EXPECT_EQ(clock.layer_messages(), (std::vector<double>{1, 1}));
}

TEST(MoveShape, AGatherForwardIsAScatterBackward) {
  const std::vector<PairVolume> gather = {{0, 2, 10}, {1, 2, 10}};
  const MoveShape forward = move_shape(gather, 3, false);
  EXPECT_TRUE(forward.one_way);
  EXPECT_EQ(forward.peers, 2);  // device 2 receives from two
  EXPECT_EQ(forward.devices, (std::set<int>{0, 1, 2}));
  const MoveShape backward = move_shape(gather, 3, true);
  EXPECT_TRUE(backward.one_way);
  EXPECT_EQ(backward.peers, 1);  // each of 0 and 1 receives from device 2 alone
  const MoveShape exchange = move_shape({{0, 1, 10}, {1, 0, 10}}, 2, false);
  EXPECT_FALSE(exchange.one_way);
  EXPECT_EQ(exchange.peers, 1);
}

TEST(MeasureOptions, BadOptionsNameTheOption) {
  const auto error_of = [](const MeasureOptions& options) {
    try {
      validate(options);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(error_of(MeasureOptions{}), "");
  MeasureOptions options;
  options.steps = 1;
  EXPECT_THAT(error_of(options), HasSubstr("--steps 1"));
  options = MeasureOptions{};
  options.core_share = 0;
  EXPECT_THAT(error_of(options), HasSubstr("--core-share 0"));
  options.core_share = 0.5;
  EXPECT_EQ(error_of(options), "");
  options.mode = MeasureMode::kAsRanks;
  EXPECT_THAT(error_of(options), HasSubstr("under layerplan launch"));
}

}  // namespace
}  // namespace layerplan
