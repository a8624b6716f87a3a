// The executor trains a ShuffleNet-v2-style net (x.chunk(2, dim=1) as two channel slices, a
// branch on the second half, the concat, a channel shuffle; a second shuffle of 4 groups)
// to the numbers of one device: on plans that split samples, height or width everywhere
// they can be, channels where the kind allows (the slices, not the shuffles), and on the
// baselines and random plans of 4 devices (relative difference ≤ 1e-4, as the exactness test).
#include <gtest/gtest.h>

#include "tests/executor_split_checks.h"

namespace layerplan::testing {
namespace {

constexpr int kSteps = 4;
constexpr double kTolerance = 1e-4;

struct ShuffleNet {
  ModelGraph graph{"shuffle_unit"};
  int first_half = 0, second_half = 0, shuffle = 0, shuffle4 = 0;
};

int conv_bn(ModelGraph& g, const std::string& name, int in, int out, int kernel, int groups, bool relu) {
  const int bn =
      g.batch_norm(name + ".bn", g.conv2d(name, in, out, Window::square(kernel, 1, kernel / 2), false, groups));
  return relu ? g.relu(name + ".relu", bn) : bn;
}

// shuffled false: each shuffle is a slice of all its channels instead, an identity.
ShuffleNet shuffle_net(bool shuffled = true) {
  ShuffleNet s;
  auto shuffle = [&](const std::string& name, int in, int groups) {
    return shuffled ? s.graph.channel_shuffle(name, in, groups) : s.graph.channel_slice(name, in, 0, 8);
  };
  ModelGraph& g = s.graph;
  const int x = g.input("data", Shape{{4, 3, 8, 8}});
  const int stem = conv_bn(g, "stem", x, 8, 3, 1, true);
  s.first_half = g.channel_slice("chunk0", stem, 0, 4);
  s.second_half = g.channel_slice("chunk1", stem, 4, 4);
  int b = conv_bn(g, "branch.0", s.second_half, 4, 1, 1, true);
  // Depthwise, with a ReLU that ShuffleNet leaves out: a 1x1 conv of a batch norm's output
  // has a batch mean of 0 up to rounding, and the next batch norm's running mean would be
  // rounding noise, which no relative tolerance compares.
  b = conv_bn(g, "branch.1", b, 4, 3, 4, true);
  b = conv_bn(g, "branch.2", b, 4, 1, 1, true);
  s.shuffle = shuffle("shuffle", g.concat("cat", {s.first_half, b}), 2);
  s.shuffle4 = shuffle("shuffle4", conv_bn(g, "conv2", s.shuffle, 8, 3, 1, true), 4);
  g.softmax_cross_entropy("loss", g.fully_connected("fc", g.global_avg_pool("gap", s.shuffle4), 10));
  return s;
}

TEST(ExecutorChannelShuffle, SplittingSamplesHeightOrWidthMatchesOneDevice) {
  const ShuffleNet s = shuffle_net();
  for (const Dim dim : {Dim::kN, Dim::kH, Dim::kW}) {
    const std::vector<Configuration> plan = split_plan(s.graph, dim);
    ASSERT_EQ(plan[static_cast<size_t>(s.shuffle)].tiles(), 2);
    expect_matches_one_device(s.graph, plan, std::string("split along ") + kDimLetters[static_cast<size_t>(dim)],
                              kSteps, kTolerance);
  }
}

// The slices split channels (each tile reads its own channels, shifted), the shuffles stay
// whole on another device, so every shuffle tile gathers the channels of both slices' producers.
TEST(ExecutorChannelShuffle, SplittingChannelsOfTheSlicesMatchesOneDevice) {
  const ShuffleNet s = shuffle_net();
  const std::vector<Configuration> plan = split_plan(s.graph, Dim::kC);
  ASSERT_EQ(plan[static_cast<size_t>(s.second_half)].degrees[1], 2);
  ASSERT_EQ(plan[static_cast<size_t>(s.shuffle)].tiles(), 1);
  expect_matches_one_device(s.graph, plan, "c split", kSteps, kTolerance);
}

TEST(ExecutorChannelShuffle, EveryBaselineAndRandomPlanOn4DevicesMatchesOneDevice) {
  const ShuffleNet s = shuffle_net();
  for (const NamedPlan& plan : plans_to_test(s.graph, 4, 12, 47u)) {
    expect_matches_one_device(s.graph, plan.configs, plan.name, kSteps, kTolerance);
  }
}

// Guards the tests above: the same net with both shuffles replaced by copies that keep
// every channel in place trains to other losses, so the plans reproduce the permutation.
TEST(ExecutorChannelShuffle, TheShuffleChangesWhatTrains) {
  const ModelGraph unshuffled = shuffle_net(false).graph;
  const ModelGraph shuffled = shuffle_net().graph;
  const TrainResult with = train(shuffled, single_device_plan(shuffled), kSteps);
  const TrainResult without = train(unshuffled, single_device_plan(unshuffled), kSteps);
  EXPECT_GT(std::abs(with.losses.back() - without.losses.back()), 1e-4);
}

}  // namespace
}  // namespace layerplan::testing
