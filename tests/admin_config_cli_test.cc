// Which admin config `layerplan topo` and `layerplan plan --topology-xml` read, and the NIC
// rates a node's sysfs gives, as a user runs them: --config FILE, $LAYERPLAN_CONFIG, the
// plugin's /etc/slurm/layerplan.toml (only looked at, never written, here), --config none;
// the line that says which, the plan file's record of it; a fake sysfs tree through
// $LAYERPLAN_SYSFS_ROOT. The harness sets LAYERPLAN_CONFIG=none unless a test says otherwise.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>

#include "model/content_hash.h"
#include "tests/cli_harness.h"
#include "tests/cli_usage_error.h"
#include "topology/admin_config_path.h"

namespace layerplan {
namespace {

using namespace testing_cli;  // NOLINT: the harness is this file's vocabulary
using ::testing::HasSubstr;

const std::string kXe8640 = data_file("topologies/flux-dell-xe8640-4xh100-nvlink-4xndr.xml");

// An admin config whose port rate shows in `topo`'s network line.
std::string write_config(const ScratchDir& dir, const std::string& gbits) {
  const std::string path = dir.file("layerplan.toml");
  write_text(path, "[fabric]\nnic_gbits = " + gbits + "\n");
  return path;
}

TEST(AdminConfigChoice, TheVariableTheFlagAndNoneEachSayWhichIsUsed) {
  ScratchDir dir;
  const std::string config = write_config(dir, "\"400Gb/s\"");
  Outcome r = run({"topo", "--topology-xml", kXe8640}, {"LAYERPLAN_CONFIG=" + config});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_TRUE(has_line_starting(r, "admin config: " + config + " ($LAYERPLAN_CONFIG)")) << r.out;
  EXPECT_THAT(r.out, HasSubstr("1 active NIC x 400 Gb/s (admin config)"));

  // --config none wins over the variable, even over a file that would not load.
  r = run({"topo", "--topology-xml", kXe8640, "--config", "none"}, {"LAYERPLAN_CONFIG=/nonexistent/x.toml"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_TRUE(has_line_starting(r, "admin config: none (built-in defaults; --config none)")) << r.out;
  EXPECT_THAT(r.out, HasSubstr("1 active NIC x 100 Gb/s (default)"));

  r = run({"topo", "--topology-xml", kXe8640, "--config", config}, {"LAYERPLAN_CONFIG=none"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_TRUE(has_line_starting(r, "admin config: " + config + " (--config)")) << r.out;

  r = run({"topo", "--topology-xml", kXe8640});  // the harness's LAYERPLAN_CONFIG=none
  EXPECT_TRUE(has_line_starting(r, "admin config: none (built-in defaults; $LAYERPLAN_CONFIG=none)")) << r.out;
}

TEST(AdminConfigChoice, WithoutFlagOrVariableThePluginsFileIsReadWhenItIsThere) {
  // This machine's /etc/slurm is only looked at: what the test expects follows what is there.
  const Outcome r = run({"topo", "--topology-xml", kXe8640}, {"LAYERPLAN_CONFIG="});
  if (std::filesystem::exists(kDefaultAdminConfigPath)) {
    EXPECT_TRUE(has_line_starting(r, std::string("admin config: ") + kDefaultAdminConfigPath + " (the default path)"))
        << describe(r);
  } else {
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(has_line_starting(r, "admin config: none (built-in defaults; no /etc/slurm/layerplan.toml)")) << r.out;
  }
}

TEST(AdminConfigChoice, AMissingOrBrokenFileIsNamedWithExitTwo) {
  ScratchDir dir;
  expect_usage_error(run({"topo", "--topology-xml", kXe8640}, {"LAYERPLAN_CONFIG=/nonexistent/site.toml"}),
                     "admin config '/nonexistent/site.toml' cannot be read: No such file or directory");
  expect_usage_error(run({"plan", "--topology-xml", kXe8640, "--config", "/nonexistent/site.toml"}),
                     "admin config '/nonexistent/site.toml' cannot be read");
  const std::string bad = write_config(dir, "\"400gb/s\"");
  expect_usage_error(run({"plan", "--topology-xml", kXe8640}, {"LAYERPLAN_CONFIG=" + bad}),
                     bad + ":2:13: fabric.nic_gbits: nic_gbits '400gb/s': expected a bandwidth");
  expect_usage_error(run({"topo", "--topology-xml", kXe8640, "--config", dir.path().string()}),
                     "admin config '" + dir.path().string() + "' is a directory, not a regular file");
}

TEST(AdminConfigChoice, ThePlanSaysWhichAndItsFileRecordsIt) {
  ScratchDir dir;
  const std::string config = write_config(dir, "200");
  const std::string file = dir.file("plan.json");
  Outcome r = run({"plan", "--topology-xml", kXe8640, "--model", "lenet5", "--batch", "64", "--json", file},
                  {"LAYERPLAN_CONFIG=" + config});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_TRUE(has_line_starting(r, "admin config: " + config + " ($LAYERPLAN_CONFIG)")) << r.out;
  nlohmann::json doc = nlohmann::json::parse(read_text(file));
  EXPECT_EQ(doc["admin_config"]["path"], config);
  EXPECT_EQ(doc["admin_config"]["size_bytes"], static_cast<int64_t>(read_text(config).size()));
  EXPECT_EQ(doc["admin_config"]["sha256"], sha256_hex(read_text(config)));

  r = run(
      {"plan", "--topology-xml", kXe8640, "--model", "lenet5", "--batch", "64", "--config", "none", "--json", file});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_TRUE(has_line_starting(r, "admin config: none (built-in defaults; --config none)")) << r.out;
  EXPECT_TRUE(nlohmann::json::parse(read_text(file))["admin_config"].is_null());

  // A cluster described by numbers is priced by no admin config.
  r = run({"plan", "--model", "lenet5", "--gpus", "2", "--gpus-per-node", "2", "--json", file});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_FALSE(has_line_starting(r, "admin config:")) << r.out;
  EXPECT_TRUE(nlohmann::json::parse(read_text(file))["admin_config"].is_null());
  expect_usage_error(run({"plan", "--model", "lenet5", "--config", "none"}),
                     "--nodes, --gpu-ids and --config go with --topology-xml or --this-machine");
}

TEST(SysfsNicRates, TopoSaysWhereTheRateCameFrom) {
  ScratchDir sysfs;
  const std::filesystem::path port = sysfs.path() / "class/infiniband/mlx5_0/ports/1";
  std::filesystem::create_directories(port);
  write_text(port / "state", "4: ACTIVE\n");
  write_text(port / "rate", "400 Gb/sec (4X NDR)\n");
  Outcome r = run({"topo", "--topology-xml", kXe8640}, {"LAYERPLAN_SYSFS_ROOT=" + sysfs.path().string()});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_THAT(r.out, HasSubstr("rate 400 Gb/s (sysfs: mlx5_0 port 1)"));
  EXPECT_THAT(r.out, HasSubstr("(1 active NIC: mlx5_0 400 Gb/s (sysfs: mlx5_0 port 1), capped by its PCIe link)"));

  // The admin's figure wins; garbage in sysfs is a note, never a failure.
  ScratchDir dir;
  write_text(port / "rate", "\x01\x02 garbage\n");
  r = run({"topo", "--topology-xml", kXe8640, "--config", write_config(dir, "100")},
          {"LAYERPLAN_SYSFS_ROOT=" + sysfs.path().string()});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_THAT(r.out, HasSubstr("1 active NIC x 100 Gb/s (admin config)"));
  EXPECT_THAT(r.out, HasSubstr("mlx5_0 port 1: " + (port / "rate").string() + " says '"));
  EXPECT_THAT(r.out, HasSubstr("expected e.g. '400 Gb/sec (4X NDR)': no rate from sysfs"));

  // An export read without $LAYERPLAN_SYSFS_ROOT takes nothing from this machine's /sys.
  r = run({"topo", "--topology-xml", kXe8640});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_THAT(r.out, HasSubstr("1 active NIC x 100 Gb/s (default)"));
}

}  // namespace
}  // namespace layerplan
