// The executor trains nets with depthwise and grouped convolutions (a MobileNet-style
// block) to the numbers of one device: a plan that splits every layer's channels, the
// baselines, the layer-wise plan and random plans on 4 devices, 5 SGD steps.
#include <gtest/gtest.h>

#include "tests/executor_test_util.h"

namespace layerplan::testing {
namespace {

constexpr int kSteps = 5;
constexpr double kTolerance = 1e-4;

// 1x1 conv to 12 channels, bn, relu; depthwise 3x3, bn, relu; a 3x3 stride-2 conv of 3
// groups (4 channels each: a c2 split cuts group 1 in half); global pooling, fc, loss.
ModelGraph mobile_block_net() {
  ModelGraph g("mobile_block");
  const int x = g.input("data", Shape{{4, 4, 8, 8}});
  const int pw = g.relu("relu1", g.batch_norm("bn1", g.conv2d("expand", x, 12, Window::square(1), false)));
  const int dw =
      g.relu("relu2", g.batch_norm("bn2", g.conv2d("depthwise", pw, 12, Window::square(3, 1, 1), false, 12)));
  const int g3 = g.relu("relu3", g.conv2d("group3", dw, 12, Window::square(3, 2, 1), true, 3));
  g.softmax_cross_entropy("loss", g.fully_connected("fc", g.global_avg_pool("gap", g3), 10));
  return g;
}

// Every layer split by `channels` where its kind allows and its channels divide, else by samples.
std::vector<Configuration> channel_plan(const ModelGraph& graph, int channels) {
  std::vector<Configuration> plan;
  std::vector<int> devices(static_cast<size_t>(channels));
  for (int d = 0; d < channels; ++d) devices[static_cast<size_t>(d)] = d;
  for (const Layer& layer : graph.layers()) {
    const bool by_channels = splittable_dims(layer.kind)[1] && layer.output.c() % channels == 0;
    plan.push_back({by_channels ? Degrees{{1, channels, 1, 1}} : Degrees{{channels, 1, 1, 1}}, devices});
  }
  return plan;
}

TEST(ExecutorGroupedConv, ChannelSplitPlansEqualOneDevice) {
  const ModelGraph graph = mobile_block_net();
  const TrainResult want = train(graph, single_device_plan(graph), kSteps);
  ASSERT_GT(std::abs(want.losses.front() - want.losses.back()), 1e-3);
  for (int channels : {2, 4}) {
    const std::vector<Configuration> plan = channel_plan(graph, channels);
    EXPECT_EQ(plan[4].degrees[1], channels);  // the depthwise conv's channels are split
    EXPECT_LE(max_difference(train(graph, plan, kSteps), want), kTolerance) << "c" << channels << " reference";
    EXPECT_LE(max_difference(train(graph, plan, kSteps, test_sgd(), "onednn"), want), kTolerance)
        << "c" << channels << " onednn";
  }
}

TEST(ExecutorGroupedConv, ChannelSplitDepthwiseConvReceivesNoInput) {
  // With the expand conv's output split by channels the same way, the depthwise conv's
  // tiles read only their own channels: the c4 plan moves nothing into it, where a full
  // conv would gather 3/4 of its input on every device.
  const ModelGraph graph = mobile_block_net();
  const std::vector<Configuration> plan = channel_plan(graph, 4);
  const Layer& dw = graph.layer(4);
  ASSERT_EQ(dw.name, "depthwise");
  EXPECT_TRUE(transfer_volumes(graph, dw, 0, plan[3], plan[4]).empty());
}

TEST(ExecutorGroupedConv, AllPlansOn4DevicesEqualOneDevice) {
  const ModelGraph graph = mobile_block_net();
  const TrainResult want = train(graph, single_device_plan(graph), kSteps);
  for (const NamedPlan& plan : plans_to_test(graph, 4, 8, 23u)) {
    EXPECT_LE(max_difference(train(graph, plan.configs, kSteps), want), kTolerance) << plan.name;
  }
}

}  // namespace
}  // namespace layerplan::testing
