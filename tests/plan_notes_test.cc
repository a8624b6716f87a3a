// What the reports say about idle GPUs, the simplicity margin and the lower bound
// (planner/plan_notes.h), and the plan file's fields for them (docs/plan-format.md), on a
// plan filled by hand (tests/idle_plan_fixture.h).
#include "planner/plan_notes.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "planner/plan_json.h"
#include "tests/idle_plan_fixture.h"

namespace layerplan {
namespace {

using ::testing::HasSubstr;
using testing_idle::IdlePlan;

TEST(PlanNotes, IdleGpusAreCountedWithTheStepOnTheNodesUsed) {
  const IdlePlan c;
  EXPECT_EQ(c.plan.idle_devices, 8);
  char step[32];
  std::snprintf(step, sizeof step, "%.2f ms", c.plan.used_nodes_step_s * 1e3);
  EXPECT_EQ(idle_devices_text(c.plan),
            "8 of 16 GPUs idle: the plan uses 1 of 2 nodes, where the same step takes " + std::string(step));
  EXPECT_EQ(idle_devices_short_text(c.plan), "the plan uses 8 of 16 GPUs");
  Plan all = c.plan;
  all.idle_devices = 0;
  EXPECT_EQ(idle_devices_text(all), "");
  EXPECT_EQ(idle_devices_short_text(all), "");
}

TEST(PlanNotes, TheSetAsidePlanIsNamedWithItsGain) {
  IdlePlan c;
  c.plan.baselines.front().timeline.step_s = 0.010;
  c.plan.set_aside_step_s = 0.00975;
  EXPECT_EQ(set_aside_text(c.plan),
            "layer-wise on 1 node (8 GPUs) (9.75 ms) was set aside: 2.5% faster than data parallel (10.00 ms), within "
            "the 3.0% simplicity margin (--min-gain)");
  c.plan.set_aside_name.clear();
  EXPECT_EQ(set_aside_text(c.plan), "");
}

TEST(PlanNotes, TheLowerBoundAndTheGap) {
  IdlePlan c;
  c.plan.chosen.timeline.step_s = 0.012;
  c.plan.lower_bound_s = 0.010;
  EXPECT_EQ(lower_bound_text(c.plan),
            "lower bound 10.00 ms: the plan is at most 20.0% above the optimum of the search space");
  c.plan.proven_optimal = true;
  EXPECT_EQ(lower_bound_text(c.plan), "lower bound 10.00 ms: the plan is the optimum of the search space, proven");
  c.plan.lower_bound_s = 0;  // the search fell back: no bound
  EXPECT_EQ(lower_bound_text(c.plan), "");
}

TEST(PlanNotes, ThePlanFileCarriesIdleGpusTheMarginAndTheBound) {
  const IdlePlan c;
  const nlohmann::json doc = nlohmann::json::parse(plan_to_json(c.plan, c.graph, c.devices));
  const nlohmann::json& used = doc.at("devices_used");
  EXPECT_EQ(used.at("job_devices"), 16);
  EXPECT_EQ(used.at("idle_devices"), 8);
  EXPECT_EQ(used.at("job_nodes"), 2);
  EXPECT_EQ(used.at("used_nodes"), 1);
  EXPECT_DOUBLE_EQ(used.at("used_nodes_step_s").get<double>(), c.plan.used_nodes_step_s);
  EXPECT_THAT(used.at("note").get<std::string>(), HasSubstr("8 of 16 GPUs idle"));
  const nlohmann::json& margin = doc.at("margin");
  EXPECT_DOUBLE_EQ(margin.at("min_gain").get<double>(), 0.03);
  EXPECT_EQ(margin.at("set_aside").at("name"), "layer-wise on 1 node (8 GPUs)");
  EXPECT_DOUBLE_EQ(margin.at("set_aside").at("step_s").get<double>(), c.plan.set_aside_step_s);
  EXPECT_THAT(margin.at("note").get<std::string>(), HasSubstr("was set aside"));
  EXPECT_DOUBLE_EQ(doc.at("search").at("lower_bound_s").get<double>(), c.plan.lower_bound_s);
  EXPECT_EQ(doc.at("search").at("proven_optimal"), false);
  EXPECT_THAT(doc.at("search").at("bound_note").get<std::string>(), HasSubstr("at most 25.0% above"));
  EXPECT_EQ(doc.at("strategy"), "data parallel on 1 node (8 GPUs)");
}

TEST(PlanNotes, APlanWithNothingIdleOrSetAsideSaysNothing) {
  IdlePlan c;
  c.plan.chosen = c.plan.baselines.front();
  record_idle_devices(c.plan, c.graph, c.devices, PlanOptions{});
  c.plan.set_aside_name.clear();
  const nlohmann::json doc = nlohmann::json::parse(plan_to_json(c.plan, c.graph, c.devices));
  EXPECT_EQ(doc.at("devices_used").at("idle_devices"), 0);
  EXPECT_EQ(doc.at("devices_used").at("used_nodes"), 2);
  EXPECT_EQ(doc.at("devices_used").at("note"), "");
  EXPECT_TRUE(doc.at("margin").at("set_aside").is_null());
}

}  // namespace
}  // namespace layerplan
