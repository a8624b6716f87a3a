// `--profile-db` and `--profile-db-out`: `layerplan predict` writes the kernel times it
// measures as a profile db; `layerplan plan` prices the layers the db holds by its times
// and every other layer as before; a bad db is one line and exit 2, naming the field.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "model/profile_db.h"
#include "tests/cli_harness.h"
#include "tests/scratch_dir.h"

namespace layerplan {
namespace {

using namespace testing_cli;
using ::testing::HasSubstr;
using ::testing::StartsWith;

const std::string kCluster = std::string(LAYERPLAN_SOURCE_DIR) + "/bench/cpu_like_4_devices.toml";

// LeNet-5, batch 32, data parallel on 2 devices of the CPU-like cluster (Tesla T4 figures).
std::vector<std::string> plan_args(const fs::path& json) {
  return {"plan", "--model",         "lenet5", "--batch", "32",   "--cluster", kCluster,     "--gpus",
          "2",    "--gpus-per-node", "2",      "--mode",  "data", "--json",    json.string()};
}

nlohmann::json plan_with(const std::vector<std::string>& extra, const fs::path& json, Outcome* out = nullptr) {
  std::vector<std::string> args = plan_args(json);
  args.insert(args.end(), extra.begin(), extra.end());
  const Outcome r = run(args);
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  if (out != nullptr) *out = r;
  return nlohmann::json::parse(read_text(json));
}

double compute_of(const nlohmann::json& plan, const std::string& layer) {
  for (const auto& l : plan.at("layers")) {
    if (l.at("name") == layer) return l.at("predicted").at("compute_s").get<double>();
  }
  ADD_FAILURE() << "no layer " << layer;
  return -1;
}

// Predict on the plan's own tiles writes the db; re-keyed to the plan's GPU, the plan
// prices every measured layer by the db and keeps the rest (input, flatten: nothing).
TEST(ProfileDbCli, PredictWritesTheDbAndThePlanPricesByIt) {
  ScratchDir dir;
  const fs::path plan_file = dir.path() / "plan.json", db_file = dir.path() / "db.json";
  const nlohmann::json plain = plan_with({}, plan_file);
  const fs::path prediction = dir.path() / "prediction.json";
  Outcome r = run({"predict", "--plan", plan_file.string(), "--steps", "3", "--link-gbytes", "1", "--link-latency-us",
                   "10", "--json", prediction.string(), "--profile-db-out", db_file.string()},
                  {"OMP_NUM_THREADS=1"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_THAT(r.out, HasSubstr("profile db written to " + db_file.string() + " (12 layers, device \"cpu:"));
  ProfileDb db = profile_db_from_json(read_text(db_file), db_file.string());
  ASSERT_EQ(db.entries.size(), 12u);  // 14 layers less the input and flatten
  const nlohmann::json p = nlohmann::json::parse(read_text(prediction));
  for (const ProfileEntry& e : db.entries) {
    EXPECT_THAT(e.device, StartsWith("cpu:"));
    EXPECT_THAT(e.device, HasSubstr("(onednn)"));
    EXPECT_EQ(e.precision, "fp32");
    EXPECT_EQ(e.repeats, 2);
    EXPECT_THAT(e.measured_on, HasSubstr("layerplan predict on "));
    EXPECT_EQ(e.output[0], 16);  // 32 samples on 2 devices
  }
  // The db's forward times are the prediction's measured ones, layer by layer.
  const ProfileEntry& conv1 = db.entries.front();
  EXPECT_EQ(conv1.layer.kind, LayerKind::kConv2d);
  EXPECT_DOUBLE_EQ(conv1.forward_s, p.at("layers")[1].at("forward_s").get<double>());

  // The CPU's name matches no GPU: the plan is priced as before, and says why.
  Outcome planned;
  const nlohmann::json unmatched = plan_with({"--profile-db", db_file.string()}, plan_file, &planned);
  EXPECT_EQ(compute_of(unmatched, "conv1"), compute_of(plain, "conv1"));
  EXPECT_THAT(planned.out, HasSubstr("holds no entries for Tesla T4 (fp32); it holds cpu:"));

  // Re-keyed to the plan's GPU, the db prices each of its layers; different times for conv1.
  for (ProfileEntry& e : db.entries) e.device = "Tesla T4";
  db.entries.front().forward_s = 0.25;
  db.entries.front().backward_s = 0.5;
  write_text(db_file, profile_db_to_json(db));
  const nlohmann::json measured = plan_with({"--profile-db", db_file.string()}, plan_file, &planned);
  EXPECT_THAT(planned.out, HasSubstr("12 of 14 layers of the data parallel plan priced by measured times"));
  EXPECT_EQ(compute_of(measured, "conv1"), 0.75);
  // The entries are in layer order, the input and flatten left out.
  size_t next = 0;
  for (const auto& l : measured.at("layers")) {
    if (l.at("kind") == "input" || l.at("kind") == "flatten") continue;
    ASSERT_LT(next, db.entries.size());
    const ProfileEntry& e = db.entries[next++];
    EXPECT_EQ(l.at("kind"), kind_name(e.layer.kind)) << l.at("name");
    EXPECT_DOUBLE_EQ(l.at("predicted").at("compute_s").get<double>(), e.forward_s + e.backward_s) << l.at("name");
  }
  EXPECT_EQ(next, db.entries.size());
  EXPECT_EQ(compute_of(measured, "flatten"), compute_of(plain, "flatten"));
}

TEST(ProfileDbCli, ABadDbIsOneLineAndExitTwo) {
  ScratchDir dir;
  const fs::path plan_file = dir.path() / "plan.json", db_file = dir.path() / "bad.json";
  write_text(
      db_file,
      R"({"format": "layerplan-profile-db", "version": 1, "entries": [{"kind": "relu", "inputs": [[1, 1, 1, 1]],)"
      R"( "output": [1, 1, 1, 1], "precision": "fp32", "device": "Tesla T4", "forward_s": -0.5,)"
      R"( "backward_s": 0, "repeats": 1, "measured_on": ""}]})");
  std::vector<std::string> args = plan_args(plan_file);
  args.insert(args.end(), {"--profile-db", db_file.string()});
  Outcome r = run(args);
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_EQ(lines_of(r.err).size(), 1u) << describe(r);
  EXPECT_THAT(r.err, HasSubstr("profile db '" + db_file.string() + "': entries[0]: forward_s -0.5: expected seconds"));
  EXPECT_FALSE(fs::exists(plan_file));

  args.back() = (dir.path() / "missing.json").string();
  r = run(args);
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_THAT(r.err, HasSubstr("missing.json"));

  // The admin key: an absolute path or nothing.
  write_text(dir.path() / "admin.toml", "[node]\nprofile_db = \"relative.json\"\n");
  r = run({"plan", "--topology-xml", data_file("topologies/mpibind-pascal-2xp100-pcie-ib.xml"), "--config",
           (dir.path() / "admin.toml").string()});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_THAT(r.err, HasSubstr("profile_db = \"relative.json\": expected an absolute path"));
}

}  // namespace
}  // namespace layerplan
