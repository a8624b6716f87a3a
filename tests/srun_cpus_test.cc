// The CPUs an srun task takes (runtime/srun_cpus.h): Slurm's task layout parsed, an even
// split among the tasks of a node when Slurm did not bind them, Slurm's binding kept when it did.
#include "runtime/srun_cpus.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/error.h"

namespace layerplan {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

SrunTask task(int local_rank, int node_index, std::string tasks_per_node, std::string cpu_bind_type = "") {
  return {local_rank, node_index, std::move(tasks_per_node), std::move(cpu_bind_type)};
}

TEST(ParseTasksPerNode, ReadsSlurmsRunLengthForm) {
  EXPECT_THAT(parse_tasks_per_node("2(x3),1"), ElementsAre(2, 2, 2, 1));
  EXPECT_THAT(parse_tasks_per_node("4"), ElementsAre(4));
  EXPECT_THAT(parse_tasks_per_node("1,3(x2)"), ElementsAre(1, 3, 3));
}

TEST(ParseTasksPerNode, MalformedTextIsOneUsageErrorNamingIt) {
  for (const char* bad : {"", "x", "2(3)", "2(x3", "0", "2,", "2(x0)", "-1"}) {
    if (std::string(bad).empty()) {
      EXPECT_TRUE(parse_tasks_per_node(bad).empty());
      continue;
    }
    try {
      parse_tasks_per_node(bad);
      ADD_FAILURE() << bad;
    } catch (const UsageError& e) {
      EXPECT_THAT(e.what(), HasSubstr(std::string("SLURM_STEP_TASKS_PER_NODE='") + bad + "'"));
    }
  }
}

TEST(SrunCpuShare, TasksOfANodeSplitItsCpusByLocalRank) {
  const std::vector<int> cpus = {0, 1, 2, 3, 4};
  // Node 1 of "2(x2),1" has 2 tasks: local rank 0 gets 3 CPUs, local rank 1 the other 2.
  const auto first = srun_cpu_share(task(0, 1, "2(x2),1"), cpus);
  const auto second = srun_cpu_share(task(1, 1, "2(x2),1"), cpus);
  ASSERT_TRUE(first && second);
  EXPECT_THAT(first->cpus, ElementsAre(0, 1, 2));
  EXPECT_EQ(first->threads, 3);
  EXPECT_THAT(second->cpus, ElementsAre(3, 4));
  EXPECT_EQ(second->threads, 2);
  // The last node has one task: all of them.
  const auto alone = srun_cpu_share(task(0, 2, "2(x2),1"), cpus);
  ASSERT_TRUE(alone);
  EXPECT_EQ(alone->cpus, cpus);
}

TEST(SrunCpuShare, ATaskSlurmBoundKeepsItsCpus) {
  const std::vector<int> mine = {6, 7};
  const auto share = srun_cpu_share(task(1, 0, "4", "mask_cpu:"), mine);
  ASSERT_TRUE(share);
  EXPECT_EQ(share->cpus, mine);
  EXPECT_EQ(share->threads, 2);
  // --cpu-bind=none is no binding: split.
  const auto unbound = srun_cpu_share(task(1, 0, "2", "none"), mine);
  ASSERT_TRUE(unbound);
  EXPECT_THAT(unbound->cpus, ElementsAre(7));
}

TEST(SrunCpuShare, NoLayoutNoShareAndAnInconsistentOneIsNamed) {
  EXPECT_FALSE(srun_cpu_share({}, {0, 1}).has_value());
  EXPECT_THROW(srun_cpu_share(task(2, 0, "2"), {0, 1}), UsageError);
  EXPECT_THROW(srun_cpu_share(task(0, 3, "2(x2)"), {0, 1}), UsageError);
}

}  // namespace
}  // namespace layerplan
