// The NCCL sub-communicators of a plan (runtime/gpu/communicator_groups.h), without a GPU:
// every bucket the executor all-reduces has a communicator (the world's or a split's) whose
// members are exactly its devices in ascending order, and each split call gives every rank
// one color and key.
#include "runtime/gpu/communicator_groups.h"

#include <gtest/gtest.h>

#include <set>

#include "runtime/executor/gradient_buckets.h"
#include "tests/executor_test_util.h"

namespace layerplan::testing {
namespace {

// The members of each communicator the splits make: color -> ranks ordered by key.
std::set<std::vector<int>> made_by(const std::vector<CommSplit>& splits, int world) {
  std::set<std::vector<int>> made;
  for (const CommSplit& split : splits) {
    EXPECT_EQ(split.color.size(), static_cast<size_t>(world));
    for (size_t color = 0; color < split.groups.size(); ++color) {
      std::vector<int> members(split.groups[color].size(), -1);
      for (int rank = 0; rank < world; ++rank) {
        if (split.color[static_cast<size_t>(rank)] != static_cast<int>(color)) continue;
        members.at(static_cast<size_t>(split.key[static_cast<size_t>(rank)])) = rank;
      }
      EXPECT_EQ(members, split.groups[color]) << "color " << color;
      EXPECT_TRUE(made.insert(members).second) << "a group made twice";
    }
  }
  return made;
}

TEST(CommunicatorGroups, EveryBucketOfEveryPlanHasItsCommunicator) {
  const ModelGraph graph = residual_inception_net();
  const int64_t bucket_bytes = ExecutorOptions{}.gradient_bucket_bytes;  // the CPU path's 25 MiB
  size_t split_groups = 0;
  for (const int world : {2, 4}) {
    for (const NamedPlan& plan : plans_to_test(graph, world, 5, 11)) {
      SCOPED_TRACE(plan.name + " on " + std::to_string(world));
      const auto groups = weight_reduction_groups(graph, plan.configs, bucket_bytes, world);
      const std::set<std::vector<int>> made = made_by(plan_comm_splits(groups, world), world);
      EXPECT_EQ(made, std::set<std::vector<int>>(groups.begin(), groups.end()));
      split_groups += made.size();
      for (const GradientBucket& b : gradient_buckets(graph, plan.configs, bucket_cap_elements(bucket_bytes))) {
        const bool world_group = static_cast<int>(b.devices.size()) == world;
        EXPECT_TRUE(world_group || made.count(b.devices) == 1) << "bucket of " << b.devices.size() << " devices";
      }
    }
  }
  EXPECT_GT(split_groups, 0u) << "no plan needed a sub-communicator: the test tests nothing";
}

TEST(CommunicatorGroups, DisjointGroupsShareOneSplitAndOverlappingOnesDoNot) {
  const std::vector<std::vector<int>> groups = {{0, 1}, {0, 2}, {2, 3}, {1, 3}};
  const std::vector<CommSplit> splits = plan_comm_splits(groups, 5);
  ASSERT_EQ(splits.size(), 2u);
  EXPECT_EQ(splits[0].groups, (std::vector<std::vector<int>>{{0, 1}, {2, 3}}));
  EXPECT_EQ(splits[0].color, (std::vector<int>{0, 0, 1, 1, CommSplit::kNoColor}));
  EXPECT_EQ(splits[0].key, (std::vector<int>{0, 1, 0, 1, 0}));
  EXPECT_EQ(splits[1].groups, (std::vector<std::vector<int>>{{0, 2}, {1, 3}}));
  EXPECT_EQ(made_by(splits, 5).size(), 4u);
  EXPECT_TRUE(plan_comm_splits({}, 4).empty());
  EXPECT_THROW(plan_comm_splits({{0, 4}}, 4), std::invalid_argument);
}

TEST(CommunicatorGroups, DataParallelNeedsOnlyTheWorld) {
  const ModelGraph graph = residual_inception_net();
  EXPECT_TRUE(weight_reduction_groups(graph, data_parallel(graph, 4), int64_t{25} << 20, 4).empty());
}

}  // namespace
}  // namespace layerplan::testing
