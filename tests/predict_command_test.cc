// `layerplan predict`: the prediction is its terms' sum, communication follows the link
// figures given, a 1-device plan communicates nothing, and bad input is exit 2.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/cli_harness.h"
#include "tests/scratch_dir.h"

namespace layerplan {
namespace {

using namespace testing_cli;
using ::testing::HasSubstr;

// The planner's LeNet-5 plan at batch 32 for `devices` of bench/cpu_like_4_devices.toml:
// on 2 devices it splits samples (n2) and channels (c2) and keeps the last layers on one.
fs::path lenet_plan(const ScratchDir& dir, int devices) {
  const fs::path file = dir.path() / ("lenet-" + std::to_string(devices) + ".json");
  const Outcome r = run({"plan", "--model", "lenet5", "--batch", "32", "--cluster",
                         std::string(LAYERPLAN_SOURCE_DIR) + "/bench/cpu_like_4_devices.toml", "--gpus",
                         std::to_string(devices), "--gpus-per-node", std::to_string(devices), "--json", file.string()});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  return file;
}

nlohmann::json predict(const fs::path& plan, const std::string& gbytes, const std::string& latency_us,
                       const ScratchDir& dir) {
  const fs::path json = dir.path() / "prediction.json";
  const Outcome r = run({"predict", "--plan", plan.string(), "--steps", "3", "--link-gbytes", gbytes,
                         "--link-latency-us", latency_us, "--json", json.string()},
                        {"OMP_NUM_THREADS=1"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_THAT(r.out, HasSubstr("predicted step"));
  return nlohmann::json::parse(read_text(json));
}

TEST(PredictCommand, TheStepIsTheSumOfMeasuredComputeAndPricedCommunication) {
  ScratchDir dir;
  const nlohmann::json p = predict(lenet_plan(dir, 2), "1", "100", dir);
  const double terms = p.at("compute_s").get<double>() + p.at("overhead_s").get<double>() +
                       p.at("data_s").get<double>() + p.at("transfer_s").get<double>() + p.at("sync_s").get<double>();
  EXPECT_NEAR(p.at("predicted_step_s").get<double>(), terms, 1e-12);
  double compute = 0, transfer = 0;
  for (const nlohmann::json& layer : p.at("layers")) {
    compute += layer.at("compute_s").get<double>();
    transfer += layer.at("transfer_s").get<double>();
  }
  EXPECT_NEAR(compute, p.at("compute_s").get<double>(), 1e-12);
  EXPECT_NEAR(transfer, p.at("transfer_s").get<double>(), 1e-12);
  EXPECT_GT(p.at("compute_s").get<double>(), 0);
  EXPECT_GT(p.at("transfer_s").get<double>(), 0);  // n2 -> c2 moves boxes
  EXPECT_GT(p.at("sync_s").get<double>(), 0);      // replicated weights are all-reduced
  EXPECT_EQ(p.at("devices"), 2);
  EXPECT_EQ(p.at("model"), "lenet5");
}

TEST(PredictCommand, CommunicationFollowsTheLinkFigures) {
  ScratchDir dir;
  const fs::path plan = lenet_plan(dir, 2);
  const nlohmann::json slow = predict(plan, "1", "100", dir);
  const nlohmann::json fast = predict(plan, "10", "10", dir);
  EXPECT_LT(fast.at("transfer_s").get<double>(), slow.at("transfer_s").get<double>() / 5);
  EXPECT_LT(fast.at("sync_s").get<double>(), slow.at("sync_s").get<double>() / 5);
}

TEST(PredictCommand, OneDeviceCommunicatesNothing) {
  ScratchDir dir;
  const nlohmann::json p = predict(lenet_plan(dir, 1), "1", "100", dir);
  EXPECT_EQ(p.at("transfer_s").get<double>(), 0);
  EXPECT_EQ(p.at("sync_s").get<double>(), 0);
}

TEST(PredictCommand, BadInputIsOneLineAndExitTwo) {
  ScratchDir dir;
  const std::string plan = lenet_plan(dir, 2).string();
  const std::vector<std::string> link = {"--link-gbytes", "1", "--link-latency-us", "10"};
  const auto with = [&](std::vector<std::string> args) {
    args.insert(args.begin(), "predict");
    return args;
  };
  const struct {
    std::vector<std::string> args;
    std::string message;
  } cases[] = {
      {with({"--plan", plan, "--steps", "1", "--link-gbytes", "1", "--link-latency-us", "10"}), "--steps 1"},
      {with({"--plan", plan, "--core-share", "0", "--link-gbytes", "1", "--link-latency-us", "10"}), "--core-share 0"},
      {with({"--plan", plan, "--core-share", "1.5", "--link-gbytes", "1", "--link-latency-us", "10"}), "--core-share 1.5"},
      {with({"--plan", plan, "--link-gbytes", "0", "--link-latency-us", "10"}), "--link-gbytes 0"},
      {with({"--plan", plan, "--link-gbytes", "1", "--link-latency-us", "-1"}), "--link-latency-us -1"},
      {with({"--plan", plan, "--link-latency-us", "10"}), "--link-gbytes"},
      {with({"--plan", (dir.path() / "missing.json").string(), "--link-gbytes", "1", "--link-latency-us", "10"}),
       "missing.json"},
      {with({"--plan", plan, "--link-gbytes", "1", "--link-latency-us", "10", "--json",
             (dir.path() / "no" / "such" / "p.json").string()}),
       "p.json"},
  };
  for (const auto& c : cases) {
    const Outcome r = run(c.args);
    EXPECT_EQ(r.exit_code, 2) << describe(r);
    EXPECT_EQ(lines_of(r.err).size(), 1u) << describe(r);
    EXPECT_THAT(r.err, HasSubstr(c.message)) << describe(r);
  }
}

}  // namespace
}  // namespace layerplan
