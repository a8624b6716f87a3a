#pragma once
// The executor tests' comparison of a plan splitting one dimension in two against one device
// (tests/executor_activation_test.cc, tests/executor_channel_shuffle_test.cc): GoogleTest
// assertions, so apart from executor_test_util.h, which programs without GoogleTest include.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "tests/executor_test_util.h"

namespace layerplan::testing {

// Every layer whose extent along `dim` is even and which can split it gets 2 tiles along
// it on devices 0 and 1; the others run on device 1 alone, so that data moves.
inline std::vector<Configuration> split_plan(const ModelGraph& graph, Dim dim) {
  const int d = static_cast<int>(dim);
  std::vector<Configuration> plan;
  for (const Layer& layer : graph.layers()) {
    Configuration c{Degrees{}, {1}};
    if (splittable_dims(layer.kind)[static_cast<size_t>(d)] && layer.output[d] % 2 == 0) {
      c.degrees.d[static_cast<size_t>(d)] = 2;
      c.devices = {0, 1};
    }
    plan.push_back(c);
  }
  return plan;
}

// `steps` of SGD with `plan` end within `tolerance` of one device (max_difference), on a
// net that learns in those steps.
inline void expect_matches_one_device(const ModelGraph& graph, const std::vector<Configuration>& plan,
                                      const std::string& name, int steps, double tolerance) {
  const TrainResult want = train(graph, single_device_plan(graph), steps);
  ASSERT_GT(std::abs(want.losses.front() - want.losses.back()), 1e-3);
  EXPECT_LE(max_difference(train(graph, plan, steps), want), tolerance) << name;
}

}  // namespace layerplan::testing
