// Executor::evaluate (forward only, eval mode) on a net with batch norm and dropout: every
// plan gives the single device's loss and correct count; it changes nothing.
#include <gtest/gtest.h>

#include "tests/executor_test_util.h"

namespace layerplan::testing {
namespace {

struct Evaluated {
  Executor::Evaluation first, again;
  double next_loss = 0;  // the step after evaluating, on the same batch (training mode)
  TrainResult after;     // parameters and running statistics after that step
};

Evaluated train_then_evaluate(const ModelGraph& graph, const std::vector<Configuration>& plan, bool evaluate) {
  static const auto kernels = make_kernels("reference");
  InProcessTransport transport;
  ExecutorOptions options;
  options.sgd = test_sgd();
  Executor executor(graph, plan, *kernels, transport, options);
  const std::vector<Batch> batches = test_batches(graph, 5);
  for (size_t i = 0; i < 3; ++i) executor.step(batches[i].images, batches[i].labels);
  Evaluated r;
  if (evaluate) {
    r.first = executor.evaluate(batches[4].images, batches[4].labels);
    r.again = executor.evaluate(batches[4].images, batches[4].labels);
  }
  r.next_loss = executor.step(batches[4].images, batches[4].labels);
  for (const Layer& layer : graph.layers()) {
    r.after.params.push_back(has_params(layer.kind) ? executor.gathered_params(layer.id) : LayerParams{});
  }
  return r;
}

TEST(ExecutorEvaluate, EveryPlanGivesTheSingleDevicesResultAndChangesNothing) {
  const ModelGraph graph = residual_inception_net();
  const Evaluated want = train_then_evaluate(graph, single_device_plan(graph), true);
  const Evaluated without = train_then_evaluate(graph, single_device_plan(graph), false);
  EXPECT_EQ(want.first.loss, want.again.loss);  // no dropout mask, no running-statistics update
  EXPECT_EQ(want.first.correct, want.again.correct);
  EXPECT_EQ(want.next_loss, without.next_loss);               // evaluating left the training state alone,
  EXPECT_EQ(max_difference(want.after, without.after), 0.0);  // running statistics included
  // Eval mode is not training mode: no dropout, running statistics instead of the batch's.
  EXPECT_GT(std::abs(want.first.loss - want.next_loss), 1e-3 * want.next_loss);
  EXPECT_GE(want.first.correct, 0);
  EXPECT_LE(want.first.correct, 4);
  // Top-5 of 10 classes: at least the top-1 hits, and the same on every plan (below).
  EXPECT_GE(want.first.correct_top5, want.first.correct);
  EXPECT_LE(want.first.correct_top5, 4);
  EXPECT_EQ(want.first.correct_top5, want.again.correct_top5);
  for (const NamedPlan& plan : plans_to_test(graph, 4, 5, 11)) {
    const Evaluated got = train_then_evaluate(graph, plan.configs, true);
    EXPECT_NEAR(got.first.loss, want.first.loss, 1e-5 * std::abs(want.first.loss)) << plan.name;
    EXPECT_EQ(got.first.correct, want.first.correct) << plan.name;
    EXPECT_EQ(got.first.correct_top5, want.first.correct_top5) << plan.name;
    EXPECT_NEAR(got.next_loss, want.next_loss, 1e-5 * std::abs(want.next_loss)) << plan.name;
  }
}

}  // namespace
}  // namespace layerplan::testing
