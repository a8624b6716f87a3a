// --intra-bw and --inter-bw with units, and the bandwidth keys of a cluster file as strings
// with units, as a user runs `layerplan plan`: a bare number keeps its old unit (GB/s and
// Gb/s), every spelling of one rate plans the same, and bad values exit 2 naming the flag.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>
#include <tuple>
#include <vector>

#include "tests/cli_harness.h"

namespace layerplan {
namespace {

using namespace testing_cli;  // NOLINT: the harness is this file's vocabulary
using ::testing::HasSubstr;
using ::testing::StartsWith;

// The predicted step of the data-parallel plan of LeNet-5 on `gpus` GPUs in nodes of 2 with
// `extra` flags.
double step_with(const std::vector<std::string>& extra, const std::string& gpus = "4") {
  ScratchDir dir;
  std::vector<std::string> args = {"plan",
                                   "--model",
                                   "lenet5",
                                   "--gpus",
                                   gpus,
                                   "--gpus-per-node",
                                   "2",
                                   "--mode",
                                   "data",
                                   "--json",
                                   dir.file("plan.json")};
  args.insert(args.end(), extra.begin(), extra.end());
  const Outcome r = run(args);
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  if (r.exit_code != 0) return -1.0;
  return nlohmann::json::parse(read_text(dir.path() / "plan.json"))["predicted"]["step_s"].get<double>();
}

TEST(BandwidthFlags, EverySpellingOfOneRatePlansTheSame) {
  const double inter = step_with({"--inter-bw", "400"});
  EXPECT_EQ(step_with({"--inter-bw", "400Gb/s"}), inter);
  EXPECT_EQ(step_with({"--inter-bw", "400 Gb/s"}), inter);
  EXPECT_EQ(step_with({"--inter-bw", "50GB/s"}), inter);
  EXPECT_EQ(step_with({"--inter-bw", "0.4Tb/s"}), inter);
  EXPECT_NE(step_with({"--inter-bw", "400MB/s"}), inter) << "MB/s is not Gb/s";

  const double intra = step_with({"--intra-bw", "20"}, "2");  // one node: only the intra-node link
  EXPECT_EQ(step_with({"--intra-bw", "20GB/s"}, "2"), intra);
  EXPECT_EQ(step_with({"--intra-bw", "160Gb/s"}, "2"), intra);
  EXPECT_NE(step_with({"--intra-bw", "20Gb/s"}, "2"), intra) << "b is bits, B bytes";
}

TEST(BandwidthFlags, BadValuesNameTheFlagTheValueAndTheForms) {
  for (const auto& [flag, value, unit] :
       std::vector<std::tuple<std::string, std::string, std::string>>{{"--inter-bw", "fast", "Gb/s"},
                                                                      {"--inter-bw", "400gbps", "Gb/s"},
                                                                      {"--intra-bw", "-3GB/s", "GB/s"},
                                                                      {"--intra-bw", "0", "GB/s"}}) {
    const Outcome r = run({"plan", "--model", "lenet5", flag, value});
    EXPECT_EQ(r.exit_code, 2) << describe(r);
    EXPECT_EQ(lines_of(r.err).size(), 1u) << r.err;
    EXPECT_THAT(r.err, StartsWith("layerplan: " + flag + " '" + value + "': expected a bandwidth"));
    EXPECT_THAT(r.err, HasSubstr("Mb/s, Gb/s, Tb/s, MB/s, GB/s, TB/s (b bits, B bytes)"));
    EXPECT_THAT(r.err, HasSubstr("a bare number is " + unit));
  }
}

TEST(BandwidthFlags, ClusterFileKeysTakeNumbersOrStringsWithUnits) {
  ScratchDir dir;
  const std::string numbers = dir.file("numbers.toml"), units = dir.file("units.toml"), bad = dir.file("bad.toml");
  write_text(numbers,
             "[cluster]\nnodes = 2\ngpus_per_node = 2\ninter_node_bandwidth_gbits = 400\n"
             "intra_node_bandwidth_gbytes = 20\n");
  write_text(units,
             "[cluster]\nnodes = 2\ngpus_per_node = 2\ninter_node_bandwidth_gbits = \"50GB/s\"\n"
             "intra_node_bandwidth_gbytes = \"160 Gb/s\"\n");
  EXPECT_EQ(step_with({"--cluster", units}), step_with({"--cluster", numbers}));
  write_text(bad, "[cluster]\ninter_node_bandwidth_gbits = \"400 Gbit/s\"\n");
  const Outcome r = run({"plan", "--model", "lenet5", "--cluster", bad});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_THAT(r.err, HasSubstr(bad + ":2:30: cluster.inter_node_bandwidth_gbits: inter_node_bandwidth_gbits "
                                     "'400 Gbit/s': expected a bandwidth"));
}

}  // namespace
}  // namespace layerplan
