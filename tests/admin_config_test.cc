// The admin's TOML: the shipped example loads; GPU names as NVML, CUDA and hwloc report
// them find their figures; every kind of mistake names the file, line and column; and
// plugstack.conf's key=value overrides reach the [slurm] defaults.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "common/error.h"
#include "planner/planner.h"
#include "topology/admin_config.h"
#include "topology/admin_config_path.h"

namespace layerplan {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::StartsWith;

const std::string kExample = std::string(LAYERPLAN_SOURCE_DIR) + "/etc/layerplan.toml";

// Writes `text` to a file of its own (removed afterwards) and returns its path.
class TomlFile {
 public:
  explicit TomlFile(const std::string& text) {
    static int counter = 0;
    path_ = (fs::temp_directory_path() /
             ("layerplan_admin_" + std::to_string(::getpid()) + "_" + std::to_string(counter++) + ".toml"))
                .string();
    std::ofstream(path_) << text;
  }
  ~TomlFile() { fs::remove(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string load_error(const std::string& text) {
  TomlFile file(text);
  try {
    load_admin_config(file.path());
  } catch (const UsageError& e) {
    const std::string message = e.what();
    // Every message starts with the file's path; strip it so tests compare the rest.
    return message.rfind(file.path(), 0) == 0 ? message.substr(file.path().size()) : message;
  }
  return "no error";
}

TEST(AdminConfigTest, ShippedExampleLoadsWithEveryGpuAndTheOffDefault) {
  const AdminConfig config = load_admin_config(kExample);
  EXPECT_EQ(config.slurm.default_mode, "off");
  EXPECT_EQ(config.slurm.default_model, "resnet50");
  EXPECT_DOUBLE_EQ(config.slurm.time_budget_s, 10.0);
  EXPECT_DOUBLE_EQ(config.slurm.min_gain, kDefaultMinGain);  // the planner's own default
  EXPECT_EQ(config.gpus.size(), 8u);
  EXPECT_FALSE(config.fabric.nic_gbits.has_value()) << "left out: sysfs's rate on a live node";
  EXPECT_EQ(config.fabric.nics_per_node, 0);
  EXPECT_DOUBLE_EQ(config.node.pcie_efficiency, 0.76);
  EXPECT_FALSE(config.overrides.gpu_model.has_value());
}

TEST(AdminConfigTest, DiscoveredNamesFindTheirFiguresFirstEntryFirst) {
  const AdminConfig config = load_admin_config(kExample);
  // NVML / CUDA names.
  EXPECT_EQ(figures_for_gpu(config, "NVIDIA H100 80GB HBM3").name, "h100");
  EXPECT_EQ(figures_for_gpu(config, "NVIDIA H100 PCIe").name, "h100-pcie");
  EXPECT_EQ(figures_for_gpu(config, "NVIDIA H200").name, "h200");
  EXPECT_EQ(figures_for_gpu(config, "A100-SXM4-40GB").name, "a100-40gb");
  EXPECT_EQ(figures_for_gpu(config, "NVIDIA A100-SXM4-80GB").name, "a100");
  EXPECT_EQ(figures_for_gpu(config, "Tesla V100-SXM3-32GB-H").name, "v100");
  EXPECT_EQ(figures_for_gpu(config, "Tesla P100-PCIE-16GB").name, "p100-pcie");
  // hwloc's PCI names, case-insensitively.
  EXPECT_EQ(figures_for_gpu(config, "GA100 [A100 SXM4 40GB]").name, "a100-40gb");
  EXPECT_EQ(figures_for_gpu(config, "gv100gl [tesla v100 sxm2 16gb]").name, "v100");
  // Not in the file: the built-in table.
  EXPECT_EQ(figures_for_gpu(config, "TU104GL [Tesla T4]").name, "t4");
  EXPECT_DOUBLE_EQ(figures_for_gpu(config, "NVIDIA H100 80GB HBM3").memory_bandwidth, 3350e9);
}

TEST(AdminConfigTest, AnUnknownGpuSaysWhatToAdd) {
  try {
    figures_for_gpu(AdminConfig{}, "NVIDIA GeForce RTX 4090");
    FAIL() << "expected an error";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("no figures for GPU 'NVIDIA GeForce RTX 4090'"));
    EXPECT_THAT(e.what(), HasSubstr("[[gpu]]"));
  }
}

TEST(AdminConfigTest, OverrideChoosesTheFiguresWhateverWasDiscovered) {
  TomlFile file(
      "[overrides]\ngpu_model = \"mine\"\nnvlink_gbytes = 150\n\n"
      "[[gpu]]\nname = \"mine\"\nmatch = \"X\"\nfp32_tflops = 1\nmemory_gbytes_per_s = 2\nmemory_gib = 3\n");
  const AdminConfig config = load_admin_config(file.path());
  EXPECT_EQ(figures_for_gpu(config, "NVIDIA H100 80GB HBM3").name, "mine");
  EXPECT_DOUBLE_EQ(*config.overrides.nvlink_gbytes, 150.0);
}

TEST(AdminConfigTest, TheNodesLayoutIsReadAndChannelsLastByDefault) {
  EXPECT_EQ(load_admin_config(TomlFile("[node]\nprecision = \"tf32\"\n").path()).node.layout,
            TensorLayout::kChannelsLast);
  EXPECT_EQ(load_admin_config(TomlFile("[node]\nlayout = \"nchw\"\n").path()).node.layout,
            TensorLayout::kChannelsFirst);
}

TEST(AdminConfigTest, MistakesNameTheirPosition) {
  EXPECT_EQ(load_error("[cluster]\nnodes = 2\n"),
            ":1:1: unknown table or key 'cluster' (expected [[gpu]], [fabric], [node], [overrides] or [slurm])");
  EXPECT_EQ(load_error("[fabric]\nnic_gbit = 200\n"), ":2:12: unknown key 'fabric.nic_gbit'");
  EXPECT_EQ(load_error("[fabric]\nnic_gbits = \"fast\"\n"),
            ":2:13: fabric.nic_gbits: nic_gbits 'fast': expected a bandwidth: a positive number and one of Mb/s, Gb/s, "
            "Tb/s, MB/s, GB/s, TB/s (b bits, B bytes), e.g. 400Gb/s or 50GB/s; a bare number is Gb/s");
  EXPECT_EQ(load_error("[fabric]\nnic_gbits = true\n"),
            ":2:13: nic_gbits must be a number (Gb/s) or a string with a unit, e.g. \"400Gb/s\"");
  EXPECT_EQ(load_error("[fabric]\nnic_gbits = -5\n"),
            ":2:13: fabric.nic_gbits: nic_gbits = -5: expected a positive number");
  EXPECT_EQ(load_error("[node]\npcie_efficiency = 1.5\n"),
            ":2:19: node.pcie_efficiency: pcie_efficiency = 1.5: expected a fraction in (0, 1]");
  EXPECT_EQ(load_error("[node]\nprecision = \"fp64\"\n"),
            ":2:13: node.precision: unknown precision 'fp64': expected fp32, tf32, bf16 or fp16");
  EXPECT_EQ(load_error("[node]\nlayout = \"chwn\"\n"),
            ":2:10: node.layout: unknown tensor layout 'chwn': expected nhwc (channels last) or nchw (channels first)");
  EXPECT_EQ(load_error("[slurm]\ndefault_mode = \"fast\"\n"),
            ":2:16: slurm.default_mode: default_mode 'fast': expected auto, layerwise, data, model, owt or off");
  EXPECT_EQ(load_error("[slurm]\nallowed_modes = [\"data\"]\ndefault_mode = \"auto\"\n"),
            ":3:16: slurm.default_mode: default_mode 'auto' is not among allowed_modes");
  EXPECT_EQ(load_error("[slurm]\ntime_budget_s = 0\n"),
            ":2:17: slurm.time_budget_s: time_budget_s = 0: expected a positive number");
  EXPECT_EQ(load_error("[slurm]\nmin_gain = -0.5\n"),
            ":2:12: slurm.min_gain: min_gain = -0.5: expected a share of data parallelism's step of 0 or more, e.g. "
            "0.03 for 3%");
  EXPECT_EQ(load_error("[slurm]\nmin_gain = \"3%\"\n"), ":2:12: min_gain must be a number");
  EXPECT_EQ(load_error("[[gpu]]\nname = \"x\"\nmatch = \"X\"\nmemory_gbytes_per_s = 2\nmemory_gib = 3\n"),
            ":1:1: gpu[0] (x) needs fp32_tflops");
  EXPECT_EQ(load_error("[[gpu]]\nname = \"x\"\nmatch = \"X\"\nfp32 = 1\n"), ":4:8: unknown key 'gpu[0].fp32'");
  EXPECT_EQ(
      load_error("[overrides]\ngpu_model = \"k80\"\n"),
      ":2:13: overrides.gpu_model: unknown GPU 'k80': expected one of p100, p100-pcie, v100, t4, a100, h100, h200");
  EXPECT_THAT(load_error("[slurm\n"), StartsWith(":1:7: "));
}

TEST(AdminConfigTest, AMissingFileIsNamed) {
  EXPECT_THROW(
      {
        try {
          load_admin_config("/nonexistent/layerplan.toml");
        } catch (const UsageError& e) {
          EXPECT_STREQ(e.what(),
                       "admin config '/nonexistent/layerplan.toml' cannot be read: No such file or directory");
          throw;
        }
      },
      UsageError);
}

TEST(AdminConfigTest, PlugstackArgumentsOverrideSlurmKeys) {
  SlurmDefaults slurm;
  set_slurm_key(slurm, "default_mode", "auto");
  set_slurm_key(slurm, "allowed_modes", "auto,data,off");
  set_slurm_key(slurm, "default_batch", "256");
  set_slurm_key(slurm, "time_budget_s", "2.5");
  set_slurm_key(slurm, "model_path", "/a,/b");
  set_slurm_key(slurm, "min_gain", "0.1");
  EXPECT_NO_THROW(validate(slurm));
  EXPECT_DOUBLE_EQ(slurm.min_gain, 0.1);
  EXPECT_EQ(slurm.default_mode, "auto");
  EXPECT_EQ(slurm.allowed_modes, (std::vector<std::string>{"auto", "data", "off"}));
  EXPECT_EQ(*slurm.default_batch, 256);
  EXPECT_DOUBLE_EQ(slurm.time_budget_s, 2.5);
  EXPECT_EQ(slurm.model_path, (std::vector<std::string>{"/a", "/b"}));

  EXPECT_THROW(set_slurm_key(slurm, "default_batch", "12x"), UsageError);
  EXPECT_THROW(set_slurm_key(slurm, "default_batch", "2.5"), UsageError);
  EXPECT_THROW(set_slurm_key(slurm, "min_gain", "-1"), UsageError);
  EXPECT_THROW(set_slurm_key(slurm, "min_gain", "abc"), UsageError);
  try {
    set_slurm_key(slurm, "colour", "blue");
    FAIL() << "expected an error";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), StartsWith("unknown key 'colour': expected default_mode"));
  }
  set_slurm_key(slurm, "default_mode", "model");
  EXPECT_THROW(validate(slurm), UsageError);  // not among allowed_modes
}

TEST(AdminConfigChoiceTest, FlagThenVariableThenTheDefaultPathWhenThere) {
  const TomlFile present("[fabric]\nnic_gbits = 200\n");
  const std::string absent = present.path() + ".absent";
  // The default path is a parameter: these tests never look at /etc/slurm.
  AdminConfigChoice c = choose_admin_config(std::string("/a.toml"), "/b.toml", present.path());
  EXPECT_EQ(c.path, "/a.toml");
  EXPECT_EQ(c.why, "--config");
  c = choose_admin_config(std::nullopt, "/b.toml", present.path());
  EXPECT_EQ(c.path, "/b.toml");
  EXPECT_EQ(c.why, "$LAYERPLAN_CONFIG");
  c = choose_admin_config(std::nullopt, "", present.path());
  EXPECT_EQ(c.path, present.path());
  EXPECT_EQ(admin_config_line(c), "admin config: " + present.path() + " (the default path)");
  c = choose_admin_config(std::nullopt, "", absent);
  EXPECT_EQ(c.path, "");
  EXPECT_EQ(admin_config_line(c), "admin config: none (built-in defaults; no " + absent + ")");
  // "none" skips whatever comes after it, the default file included.
  c = choose_admin_config(std::string("none"), "/b.toml", present.path());
  EXPECT_EQ(admin_config_line(c), "admin config: none (built-in defaults; --config none)");
  c = choose_admin_config(std::nullopt, "none", present.path());
  EXPECT_EQ(admin_config_line(c), "admin config: none (built-in defaults; $LAYERPLAN_CONFIG=none)");
  c = choose_admin_config(std::string("./none"), "", absent);
  EXPECT_EQ(c.path, "./none");
  // Something at the default path that is not a readable file is chosen, so that loading it names it.
  EXPECT_EQ(choose_admin_config(std::nullopt, "", fs::temp_directory_path().string()).path,
            fs::temp_directory_path().string());
  EXPECT_STREQ(kDefaultAdminConfigPath, "/etc/slurm/layerplan.toml");
}

TEST(AdminConfigTest, BandwidthKeysTakeNumbersOrStringsWithUnits) {
  const AdminConfig config =
      load_admin_config(TomlFile("[fabric]\nnic_gbits = \"50GB/s\"\n[node]\ninter_socket_gbytes = \"80 Gb/s\"\n"
                                 "[overrides]\nnvlink_gbytes = \"1.2Tb/s\"\n")
                            .path());
  EXPECT_DOUBLE_EQ(*config.fabric.nic_gbits, 400.0);
  EXPECT_DOUBLE_EQ(config.node.inter_socket_gbytes, 10.0);
  EXPECT_DOUBLE_EQ(*config.overrides.nvlink_gbytes, 150.0);
  EXPECT_DOUBLE_EQ(*load_admin_config(TomlFile("[fabric]\nnic_gbits = 400\n").path()).fabric.nic_gbits, 400.0);
  EXPECT_EQ(load_error("[overrides]\nnvlink_gbytes = \"150 GB/sec\"\n"),
            ":2:17: overrides.nvlink_gbytes: nvlink_gbytes '150 GB/sec': expected a bandwidth: a positive number and "
            "one of Mb/s, Gb/s, Tb/s, MB/s, GB/s, TB/s (b bits, B bytes), e.g. 400Gb/s or 50GB/s; a bare number is "
            "GB/s");
}

}  // namespace
}  // namespace layerplan
