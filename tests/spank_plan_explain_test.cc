// What the Slurm plugin tells a job whose plan leaves GPUs idle (tests/idle_plan_fixture.h):
// the summary line (LAYERPLAN_SUMMARY) and the --layerplan-explain lines say how many GPUs
// the plan uses and the step on the nodes it uses; --layerplan-explain also names the plan
// the simplicity margin set aside.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "job/job_plan.h"
#include "planner/plan_notes.h"
#include "spank_plugin/plan_explain.h"
#include "tests/idle_plan_fixture.h"

namespace layerplan::spank {
namespace {

using ::testing::Contains;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::Not;
using testing_idle::IdlePlan;

JobPlan job_of(const IdlePlan& c) {
  JobPlan job{c.graph, c.devices, c.plan, "", "", "", nullptr, ""};
  job.summary = summary_line(job, c.devices.nodes());
  return job;
}

TEST(SpankPlanExplain, TheSummaryLineSaysHowManyGpusThePlanUses) {
  const IdlePlan c;
  char there[64];
  std::snprintf(there, sizeof there, "(1 of 2 nodes: %.1f ms/step there)", c.plan.used_nodes_step_s * 1e3);
  EXPECT_THAT(job_of(c).summary, EndsWith("; the plan uses 8 of 16 GPUs " + std::string(there)));
  EXPECT_THAT(job_of(c).summary, HasSubstr("resnet50 data parallel on 1 node (8 GPUs) on 2 nodes x 8"));
}

TEST(SpankPlanExplain, ExplainSaysWhatIsIdleAndWhatWasSetAside) {
  const IdlePlan c;
  const std::vector<std::string> lines = explain_lines(job_of(c));
  ASSERT_GE(lines.size(), 3u);
  EXPECT_EQ(lines[1], "layerplan: " + idle_devices_text(c.plan));
  EXPECT_EQ(lines[2], "layerplan: " + set_aside_text(c.plan));
}

TEST(SpankPlanExplain, NothingIdleNothingSaid) {
  IdlePlan c;
  c.plan.chosen = c.plan.baselines.front();
  record_idle_devices(c.plan, c.graph, c.devices, PlanOptions{});
  c.plan.set_aside_name.clear();
  const JobPlan job = job_of(c);
  EXPECT_THAT(job.summary, Not(HasSubstr("GPUs")));
  EXPECT_THAT(explain_lines(job), Not(Contains(HasSubstr("idle"))));
}

}  // namespace
}  // namespace layerplan::spank
