// What the plugin computes for a job step (spank_plugin/step_plan.h) on the 4 x H100
// fixture with Slurm's GPU variables, without Slurm: the same plan `layerplan` makes,
// deterministic across nodes, and plan files checked against the job.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

#include "common/error.h"
#include "model/zoo.h"
#include "planner/plan_json.h"
#include "spank_plugin/plan_explain.h"
#include "spank_plugin/plan_file.h"
#include "spank_plugin/step_plan.h"

namespace layerplan::spank {
namespace {

using ::testing::HasSubstr;

const std::string kH100Xml =
    std::string(LAYERPLAN_SOURCE_DIR) + "/tests/data/topologies/flux-dell-xe8640-4xh100-nvlink-4xndr.xml";

AdminConfig fixture_config() {
  AdminConfig config;
  config.slurm.topology_xml = kH100Xml;
  config.slurm.time_budget_s = 30;
  return config;
}

StepRequest auto_request(const std::string& model = "resnet50") {
  StepRequest r;
  r.off = false;
  r.mode = "auto";
  r.model = model;
  return r;
}

TEST(SpankStepPlan, DiscoversTheStepsGpusFromSlurmVariables) {
  GpuEnvironment env;
  env.slurm_step_gpus = "0-3";
  EXPECT_EQ(discover_step_node(fixture_config(), env).gpu_count(), 4);
  env.slurm_step_gpus = "1,3";
  EXPECT_EQ(discover_step_node(fixture_config(), env).gpu_count(), 2);
}

TEST(SpankStepPlan, AStepWithoutGpusIsRefused) {
  try {
    discover_step_node(fixture_config(), GpuEnvironment{});
    ADD_FAILURE() << "a step without GPU variables was planned";
  } catch (const UsageError& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("--gpus-per-node"));
  }
}

TEST(SpankStepPlan, ThreeNodesOfFourH100GiveAReadablePlanAndTheEnvironmentFigures) {
  GpuEnvironment env;
  env.slurm_job_gpus = "0,1,2,3";
  const NodeTopology node = discover_step_node(fixture_config(), env);
  const StepPlan plan = plan_step(auto_request(), node, 3, fixture_config());
  EXPECT_EQ(plan.mode, "auto");
  EXPECT_GT(plan.step_ms, 0.0);
  EXPECT_THAT(plan.summary, HasSubstr("resnet50"));
  EXPECT_THAT(plan.summary, HasSubstr("3 nodes x 4"));
  EXPECT_TRUE(plan.explain.empty());
  const ModelGraph graph = build_zoo_model("resnet50", 384);
  EXPECT_EQ(configurations_from_json(plan.json, graph, 12).size(), static_cast<size_t>(graph.size()));
}

TEST(SpankStepPlan, BatchPerGpuPlansTheGlobalBatchOfTheStepsGpus) {
  GpuEnvironment env;
  env.slurm_step_gpus = "0-3";
  const NodeTopology node = discover_step_node(fixture_config(), env);
  StepRequest r = auto_request();
  r.batch_per_gpu = 16;
  r.batch_given = true;
  const StepPlan plan = plan_step(r, node, 2, fixture_config());  // 8 GPUs
  EXPECT_THAT(plan.summary, HasSubstr("batch 128"));
  const ModelGraph graph = build_zoo_model("resnet50", 128);
  EXPECT_EQ(configurations_from_json(plan.json, graph, 8).size(), static_cast<size_t>(graph.size()));
}

TEST(SpankStepPlan, EveryNodeComputesTheSamePlan) {
  GpuEnvironment env;
  env.slurm_step_gpus = "0-3";
  const NodeTopology node = discover_step_node(fixture_config(), env);
  const StepPlan a = plan_step(auto_request(), node, 3, fixture_config());
  const StepPlan b = plan_step(auto_request(), discover_step_node(fixture_config(), env), 3, fixture_config());
  EXPECT_EQ(plan_difference(a.json, b.json), "");
}

TEST(SpankStepPlan, ExplainGivesARowPerLayerAndATotal) {
  GpuEnvironment env;
  env.cuda_visible_devices = "0,1";
  StepRequest r = auto_request("alexnet");
  r.explain = true;
  const StepPlan plan = plan_step(r, discover_step_node(fixture_config(), env), 1, fixture_config());
  const ModelGraph graph = build_zoo_model("alexnet", 64);
  ASSERT_EQ(plan.explain.size(), static_cast<size_t>(graph.size()) + 4);
  EXPECT_THAT(plan.explain[1], HasSubstr("compute ms"));
  EXPECT_THAT(plan.explain[plan.explain.size() - 2], HasSubstr("total"));
}

// The last line is the step by the timeline, which the plan was chosen by and
// LAYERPLAN_STEP_MS says, not the additive sum of the table's columns.
TEST(SpankStepPlan, ExplainEndsWithTheTimelineStepTheJobIsTold) {
  GpuEnvironment env;
  env.cuda_visible_devices = "0,1,2,3";
  StepRequest r = auto_request("resnet50");
  r.explain = true;
  const StepPlan plan = plan_step(r, discover_step_node(fixture_config(), env), 2, fixture_config());
  const std::string& line = plan.explain.back();
  char step[64];
  std::snprintf(step, sizeof step, "step %.3f ms by the timeline", plan.step_ms);
  EXPECT_THAT(line, HasSubstr(step));
  // The additive figure is there too, and on 2 nodes the two differ (sync overlaps).
  const size_t at = line.find("additive ");
  ASSERT_NE(at, std::string::npos) << line;
  const double additive_ms = std::stod(line.substr(at + 9));
  EXPECT_GT(additive_ms, 0.0);
  EXPECT_GT(std::abs(additive_ms - plan.step_ms), 1e-3) << line;
  EXPECT_THAT(line, HasSubstr("overlapping the backward"));
}

TEST(SpankStepPlan, ExplainWritesTheReportNextToThePlanFile) {
  GpuEnvironment env;
  env.cuda_visible_devices = "0,1";
  StepRequest r = auto_request("alexnet");
  EXPECT_TRUE(plan_step(r, discover_step_node(fixture_config(), env), 1, fixture_config()).report_html.empty());
  r.explain = true;
  const StepPlan plan = plan_step(r, discover_step_node(fixture_config(), env), 1, fixture_config());
  const ModelGraph graph = build_zoo_model("alexnet", 64);
  for (const Layer& l : graph.layers()) {
    EXPECT_THAT(plan.report_html, HasSubstr("data-layer=\"" + l.name + "\"")) << l.name;
  }
  char folder[] = "/tmp/layerplan-report-XXXXXX";
  ASSERT_NE(::mkdtemp(folder), nullptr);
  const std::string plan_path = std::string(folder) + "/layerplan-12.0.json";
  const std::string path = publish_report(plan_path, plan.report_html);
  EXPECT_EQ(path, std::string(folder) + "/layerplan-12.0.html");
  std::ifstream in(path);
  const std::string written((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(written, plan.report_html);
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600U);
  EXPECT_THROW(publish_report(std::string(folder) + "/no-such-folder/p.json", "x"), UsageError);
  std::remove(path.c_str());
  ::rmdir(folder);
}

TEST(SpankStepPlan, UnsatisfiableBatchAndUnknownModelAreNamed) {
  GpuEnvironment env;
  env.slurm_step_gpus = "0-3";
  const NodeTopology node = discover_step_node(fixture_config(), env);
  StepRequest r = auto_request();
  r.batch = 7;
  try {
    plan_step(r, node, 3, fixture_config());
    ADD_FAILURE() << "batch 7 on 12 GPUs was planned";
  } catch (const UsageError& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("7"));
  }
  try {
    plan_step(auto_request("nosuchnet"), node, 3, fixture_config());
    ADD_FAILURE() << "an unknown model was planned";
  } catch (const UsageError& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("'nosuchnet'"));
  }
}

TEST(SpankStepPlan, APlanFileIsCheckedAgainstTheStepsDeviceCount) {
  GpuEnvironment env;
  env.slurm_step_gpus = "0-3";
  const NodeTopology node = discover_step_node(fixture_config(), env);
  const StepPlan made = plan_step(auto_request(), node, 2, fixture_config());  // 8 GPUs, batch 256
  const std::string path = ::testing::TempDir() + "/spank_step_plan_" + std::to_string(::getpid()) + ".json";
  std::ofstream(path) << made.json;
  StepRequest r;
  r.off = false;
  r.mode = "file";
  r.plan_file = path;
  r.model = "vgg16";  // the admin default: not used, the file names its model
  const StepPlan used = plan_step(r, node, 2, fixture_config());
  EXPECT_EQ(used.mode, "file");
  EXPECT_EQ(used.json, made.json);
  EXPECT_NEAR(used.step_ms, made.step_ms, 1e-6);
  EXPECT_THAT(used.summary, HasSubstr("resnet50"));
  try {
    plan_step(r, node, 3, fixture_config());  // 12 GPUs
    ADD_FAILURE() << "a plan for 8 GPUs was used on 12";
  } catch (const UsageError& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("does not fit this job"));
    EXPECT_THAT(std::string(e.what()), HasSubstr(path));
  }
  std::remove(path.c_str());
  EXPECT_THROW(plan_step(r, node, 2, fixture_config()), UsageError);  // gone: cannot be read
}

}  // namespace
}  // namespace layerplan::spank
