// The SPANK plugin's option, plugstack-argument and request rules (spank_plugin/), which
// decide what sbatch/srun accept and what a job step does, without Slurm.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>
#include <cstdio>
#include <fstream>
#include <string>

#include "common/error.h"
#include "spank_plugin/job_options.h"
#include "spank_plugin/plugstack_args.h"
#include "spank_plugin/step_environment.h"
#include "spank_plugin/step_request.h"

namespace layerplan::spank {
namespace {

using ::testing::HasSubstr;

std::string usage_error(JobOptions& options, OptionId id, const char* value) {
  try {
    set_job_option(options, id, value);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(SpankOptions, ModesAndPlanFilesAreTellApart) {
  JobOptions o;
  set_job_option(o, OptionId::kMode, "layerwise");
  EXPECT_EQ(o.mode, "layerwise");
  set_job_option(o, OptionId::kMode, "/home/u/plan.json");
  EXPECT_FALSE(o.mode);
  EXPECT_EQ(o.plan_file, "/home/u/plan.json");
  set_job_option(o, OptionId::kMode, "plan.json");
  EXPECT_EQ(o.plan_file, "plan.json");
}

TEST(SpankOptions, BadModeNamesTheValueAndTheChoices) {
  JobOptions o;
  const std::string message = usage_error(o, OptionId::kMode, "fast");
  EXPECT_THAT(message, HasSubstr("--layerplan 'fast'"));
  EXPECT_THAT(message, HasSubstr("auto, layerwise, data, model, owt, off or the path of a plan file"));
  EXPECT_THAT(usage_error(o, OptionId::kMode, ""), HasSubstr("--layerplan needs a value"));
  EXPECT_THAT(usage_error(o, OptionId::kMode, nullptr), HasSubstr("--layerplan needs a value"));
}

TEST(SpankOptions, RepeatedIdenticalValueIsAcceptedAndALaterOneWins) {
  JobOptions o;
  set_job_option(o, OptionId::kMode, "auto");
  set_job_option(o, OptionId::kMode, "auto");
  EXPECT_EQ(o.mode, "auto");
  set_job_option(o, OptionId::kMode, "data");  // srun --layerplan=data inside #SBATCH --layerplan=auto
  EXPECT_EQ(o.mode, "data");
  set_job_option(o, OptionId::kBatch, "64");
  set_job_option(o, OptionId::kBatch, "64");
  EXPECT_EQ(o.batch, 64);
  set_job_option(o, OptionId::kExplain, nullptr);
  set_job_option(o, OptionId::kExplain, nullptr);
  EXPECT_TRUE(o.explain);
}

TEST(SpankOptions, BatchMustBeAWholeNumberOfOneOrMore) {
  JobOptions o;
  for (const char* bad : {"0", "-4", "12x", "1.5", " 8", "+8", "16777217", "99999999999999999999999"}) {
    EXPECT_THAT(usage_error(o, OptionId::kBatch, bad), HasSubstr(std::string("--layerplan-batch '") + bad + "'"))
        << bad;
  }
  EXPECT_FALSE(o.batch);
  set_job_option(o, OptionId::kBatch, "384");
  EXPECT_EQ(o.batch, 384);
  set_job_option(o, OptionId::kBatch, "16777216");
  EXPECT_EQ(o.batch, 16777216);
}

TEST(SpankOptions, BatchPerGpuIsCheckedAndReplacesTheGlobalBatchAndBack) {
  JobOptions o;
  for (const char* bad : {"0", "-1", "8 ", "16777217"}) {
    EXPECT_THAT(usage_error(o, OptionId::kBatchPerGpu, bad),
                HasSubstr(std::string("--layerplan-batch-per-gpu '") + bad + "'"))
        << bad;
  }
  set_job_option(o, OptionId::kBatch, "512");       // #SBATCH --layerplan-batch=512
  set_job_option(o, OptionId::kBatchPerGpu, "32");  // srun --layerplan-batch-per-gpu=32 inside it
  EXPECT_EQ(o.batch_per_gpu, 32);
  EXPECT_FALSE(o.batch);
  set_job_option(o, OptionId::kBatch, "256");
  EXPECT_EQ(o.batch, 256);
  EXPECT_FALSE(o.batch_per_gpu);
}

TEST(SpankStepRequest, BatchPerGpuMultipliesByTheStepsGpus) {
  SlurmDefaults d;
  d.default_mode = "auto";
  d.default_batch = 256;
  JobOptions o;
  o.batch_per_gpu = 48;
  const StepRequest r = resolve_step_request(o, d);
  EXPECT_TRUE(r.batch_given);
  EXPECT_EQ(step_batch(r, 12), 576);
  EXPECT_EQ(step_batch(resolve_step_request({}, d), 12), 256);  // the admin's global default as is
  o.batch_per_gpu = 1 << 20;
  try {
    step_batch(resolve_step_request(o, d), 32);
    ADD_FAILURE() << "2^25 images per step were accepted";
  } catch (const UsageError& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("--layerplan-batch-per-gpu 1048576 on 32 GPUs"));
  }
}

TEST(SpankOptions, ModelNeedsAValueOfSaneLength) {
  JobOptions o;
  EXPECT_THAT(usage_error(o, OptionId::kModel, ""), HasSubstr("--layerplan-model needs a value"));
  const std::string huge(5000, 'x');
  EXPECT_THAT(usage_error(o, OptionId::kModel, huge.c_str()), HasSubstr("5000 characters"));
  set_job_option(o, OptionId::kModel, "resnet50");
  EXPECT_EQ(o.model, "resnet50");
}

PlugstackArgs parse(std::vector<const char*> argv) {
  return parse_plugstack_args(static_cast<int>(argv.size()), argv.data());
}

std::string plugstack_error(std::vector<const char*> argv) {
  try {
    parse(argv);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(SpankPlugstackArgs, ConfigAndOverridesInOrder) {
  const PlugstackArgs args = parse({"config=/etc/slurm/layerplan.toml", "default_mode=auto", "time_budget_s=2"});
  EXPECT_EQ(args.config_path, "/etc/slurm/layerplan.toml");
  ASSERT_EQ(args.overrides.size(), 2u);
  EXPECT_EQ(args.overrides[0].first, "default_mode");
  EXPECT_EQ(args.overrides[1].second, "2");
}

TEST(SpankPlugstackArgs, UnknownKeysAndMalformedArgumentsAreErrors) {
  EXPECT_THAT(plugstack_error({"defualt_mode=auto"}), HasSubstr("'defualt_mode=auto'"));
  EXPECT_THAT(plugstack_error({"defualt_mode=auto"}), HasSubstr("unknown key 'defualt_mode'"));
  EXPECT_THAT(plugstack_error({"verbose"}), HasSubstr("'verbose': expected key=value"));
  EXPECT_THAT(plugstack_error({"config="}), HasSubstr("config="));
  EXPECT_THAT(plugstack_error({"time_budget_s=soon"}), HasSubstr("time_budget_s 'soon'"));
}

TEST(SpankPlugstackArgs, PlanOnceIsAutoOrOff) {
  EXPECT_TRUE(parse({}).plan_once);
  EXPECT_TRUE(parse({"plan_once=auto"}).plan_once);
  EXPECT_FALSE(parse({"plan_once=off"}).plan_once);
  EXPECT_THAT(plugstack_error({"plan_once=yes"}), HasSubstr("'plan_once=yes': expected auto"));
  EXPECT_TRUE(parse({"plan_once=off"}).overrides.empty());  // not a [slurm] key
}

TEST(SpankPlugstackArgs, OverridesApplyOverTheFileAndAreValidatedTogether) {
  AdminConfig defaults = load_plugin_config(parse({}));
  EXPECT_EQ(defaults.slurm.default_mode, "off");
  const AdminConfig config = load_plugin_config(parse({"default_mode=data", "allowed_modes=data,off", "plan_dir=/p"}));
  EXPECT_EQ(config.slurm.default_mode, "data");
  EXPECT_EQ(config.slurm.plan_dir, "/p");
  try {
    load_plugin_config(parse({"default_mode=auto", "allowed_modes=data,off"}));
    ADD_FAILURE() << "a default mode outside allowed_modes was accepted";
  } catch (const UsageError& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("default_mode 'auto' is not among allowed_modes"));
  }
}

TEST(SpankPlugstackArgs, ABrokenOrMissingConfigFileIsNamed) {
  try {
    load_plugin_config(parse({"config=/nonexistent/layerplan.toml"}));
    ADD_FAILURE() << "a missing config was accepted";
  } catch (const UsageError& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("/nonexistent/layerplan.toml"));
  }
  const std::string path = ::testing::TempDir() + "/spank_broken_" + std::to_string(::getpid()) + ".toml";
  std::ofstream(path) << "[slurm]\ndefault_mode = \"sometimes\"\n";
  try {
    load_plugin_config(parse({("config=" + path).c_str()}));
    ADD_FAILURE() << "a broken config was accepted";
  } catch (const UsageError& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr(path + ":2:"));
    EXPECT_THAT(std::string(e.what()), HasSubstr("sometimes"));
  }
  std::remove(path.c_str());
}

TEST(SpankStepRequest, AbsentFlagTakesTheAdminDefaults) {
  SlurmDefaults d;
  EXPECT_TRUE(resolve_step_request({}, d).off);  // out of the box: off
  d.default_mode = "auto";
  d.default_model = "vgg16";
  d.default_batch = 256;
  const StepRequest r = resolve_step_request({}, d);
  EXPECT_FALSE(r.off);
  EXPECT_EQ(r.mode, "auto");
  EXPECT_EQ(r.model, "vgg16");
  EXPECT_EQ(r.batch, 256);
  EXPECT_FALSE(r.model_given);
  EXPECT_FALSE(r.batch_given);
}

TEST(SpankStepRequest, JobValuesWinAndOffLeavesTheJobAlone) {
  SlurmDefaults d;
  d.default_mode = "auto";
  JobOptions o;
  o.mode = "off";
  o.model = "resnet101";
  const StepRequest off = resolve_step_request(o, d);
  EXPECT_TRUE(off.off);
  ASSERT_EQ(off.notes.size(), 1u);
  EXPECT_THAT(off.notes[0], HasSubstr("no effect"));
  o.mode = "data";
  o.batch = 96;
  const StepRequest r = resolve_step_request(o, d);
  EXPECT_EQ(r.mode, "data");
  EXPECT_EQ(r.model, "resnet101");
  EXPECT_TRUE(r.model_given);
  EXPECT_EQ(r.batch, 96);
}

TEST(SpankStepRequest, ModeOutsideAllowedModesIsRefusedNamingTheList) {
  SlurmDefaults d;
  d.allowed_modes = {"data", "off"};
  JobOptions o;
  o.mode = "layerwise";
  try {
    resolve_step_request(o, d);
    ADD_FAILURE() << "a mode outside allowed_modes was accepted";
  } catch (const UsageError& e) {
    EXPECT_THAT(std::string(e.what()),
                HasSubstr("'layerwise' is not allowed on this cluster: expected one of data, off"));
  }
}

TEST(SpankStepRequest, PlanFileIsUsedWhateverTheDefaultMode) {
  JobOptions o;
  o.plan_file = "/home/u/p.json";
  const StepRequest r = resolve_step_request(o, SlurmDefaults{});
  EXPECT_FALSE(r.off);
  EXPECT_EQ(r.mode, "file");
  EXPECT_EQ(r.plan_file, "/home/u/p.json");
}

TEST(SpankStepEnvironment, FiveVariablesOnOneLine) {
  StepPlan plan;
  plan.mode = "auto";
  plan.step_ms = 49.90812;
  plan.summary = "resnet50 layer-wise\non 12 GPUs";
  const std::string sha(64, 'a');
  const auto env = plan_environment("/w/layerplan-7.0.json", sha, plan);
  ASSERT_EQ(env.size(), 5u);
  EXPECT_EQ(env[0], (std::pair<std::string, std::string>{"LAYERPLAN_PLAN", "/w/layerplan-7.0.json"}));
  EXPECT_EQ(env[1], (std::pair<std::string, std::string>{"LAYERPLAN_PLAN_SHA256", sha}));
  EXPECT_EQ(env[2].second, "auto");
  EXPECT_EQ(env[3], (std::pair<std::string, std::string>{"LAYERPLAN_STEP_MS", "49.908"}));
  EXPECT_EQ(env[4].second, "resnet50 layer-wise on 12 GPUs");
}

}  // namespace
}  // namespace layerplan::spank
