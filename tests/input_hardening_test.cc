// Input a user names can be anything: a FIFO nobody writes to, /dev/zero, a directory,
// JSON nested 200000 levels deep, a number of 1e999, a boolean where a batch belongs, a
// device count of 2^40 + 1, tensor extents whose products overflow 64 bits. Every reader
// refuses such input with one UsageError line (exit 2 from the CLI) that names the file,
// the field and what was expected; nothing blocks, reads without end, crashes, or is
// silently truncated (common/input_file.h, common/limits.h, docs/limits.md).
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "common/error.h"
#include "common/index.h"
#include "common/input_file.h"
#include "common/limits.h"
#include "common/text.h"
#include "model/geometry.h"
#include "model/model_file.h"
#include "model/plan_file.h"
#include "model/zoo.h"
#include "runtime/datasets.h"
#include "runtime/safetensors.h"
#include "tests/cli_harness.h"
#include "topology/cluster_spec.h"
#include "topology/hwloc_xml_file.h"

namespace layerplan {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using testing_cli::describe;
using testing_cli::lines_of;
using testing_cli::Outcome;
using testing_cli::run;
using testing_cli::write_text;

// The message of the UsageError that `read` throws, obtained in a child process that is
// killed when it blocks for 30 s or asks for 1 GiB of memory: a reader that waits on a
// FIFO or reads /dev/zero without end fails the test instead of hanging it or eating
// the machine. Anything other than a UsageError is described instead.
std::string refusal_in_child(const std::function<void()>& read) {
  int fds[2];
  if (::pipe(fds) != 0) return "pipe failed";
  const pid_t child = ::fork();
  if (child == 0) {
    ::close(fds[0]);
    ::alarm(30);  // a guard against a hang, not a timing
                  // ASan reserves terabytes of address space for its shadow memory and cannot work under
                  // an address-space cap (scripts/test-sanitized); the Release suite keeps the cap.
#ifndef __SANITIZE_ADDRESS__
    const rlimit memory{rlim_t{1} << 30, rlim_t{1} << 30};
    ::setrlimit(RLIMIT_AS, &memory);
#endif
    std::string outcome;
    try {
      read();
      outcome = "accepted";
    } catch (const UsageError& e) {
      outcome = e.what();
    } catch (const std::exception& e) {
      outcome = std::string("not a UsageError: ") + e.what();
    }
    const ssize_t ignored = ::write(fds[1], outcome.data(), outcome.size());
    (void)ignored;
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string message;
  char buffer[4096];
  for (ssize_t n; (n = ::read(fds[0], buffer, sizeof buffer)) > 0;) message.append(buffer, static_cast<size_t>(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  return message;
}

// ---------------------------------------------------------------- one safe reader

TEST(InputFile, ReadsARegularFileWhole) {
  ScratchDir dir;
  write_text(dir.file("a.json"), "{\"x\": 1}\n");
  EXPECT_EQ(read_input_file(dir.file("a.json"), "plan file 'a.json'", 100), "{\"x\": 1}\n");
  write_text(dir.file("empty"), "");
  EXPECT_EQ(read_input_file(dir.file("empty"), "plan file 'empty'", 100), "");
}

TEST(InputFile, RefusesAFifoWithoutBlocking) {
  ScratchDir dir;
  const std::string fifo = dir.file("plan.json");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(refusal_in_child([&] { read_plan_text(fifo, "plan file '" + fifo + "'"); }),
            "plan file '" + fifo + "' is a FIFO, not a regular file");
  EXPECT_EQ(refusal_in_child([&] { load_cluster_file(fifo); }),
            "cluster file '" + fifo + "' is a FIFO, not a regular file");
  EXPECT_EQ(refusal_in_child([&] { idx_dataset_shape(fifo, fifo); }),
            "dataset file '" + fifo + "' is a FIFO, not a regular file");
  EXPECT_EQ(refusal_in_child([&] { safetensors::Reader reader(fifo); }),
            "safetensors file '" + fifo + "' is a FIFO, not a regular file");
  EXPECT_EQ(refusal_in_child([&] { resolve_model(fifo, {}, 1); }),
            "model file '" + fifo + "' is a FIFO, not a regular file");
}

TEST(InputFile, RefusesDevicesAndDirectories) {
  EXPECT_EQ(refusal_in_child([] { read_plan_text("/dev/zero", "plan file '/dev/zero'"); }),
            "plan file '/dev/zero' is a character device, not a regular file");
  EXPECT_EQ(refusal_in_child([] { resolve_model("/dev/zero", {}, 1); }),
            "model file '/dev/zero' is a character device, not a regular file");
  EXPECT_EQ(refusal_in_child([] { read_hwloc_xml_file("/dev/zero"); }),
            "hwloc XML file '/dev/zero' is a character device, not a regular file");
  ScratchDir dir;
  EXPECT_EQ(refusal_in_child([&] { read_input_file(dir.path().string(), "admin config 'd'", 100); }),
            "admin config 'd' is a directory, not a regular file");
}

// The hwloc XML check once searched to the end of the export for every "<object" without a
// '>': 1.2 MB of them took over 2 minutes of CPU, 8 MB would take hours.
TEST(InputFile, AnHwlocExportOfUnclosedObjectTagsIsRefusedWithoutQuadraticWork) {
  std::string text = "<topology version=\"2.0\">\n";
  for (int i = 0; i < 1000000; ++i) text += "<object ";
  text += "\n</topology>\n";
  EXPECT_EQ(refusal_in_child([&] { check_hwloc_xml_text(text, "unclosed.xml"); }),
            "'unclosed.xml' is malformed hwloc XML: the <object> tag on line 2 is not well-formed (expected "
            "name=\"value\" attributes and a closing '>')");
}

TEST(InputFile, RefusesAFileAboveItsKindsCapBeforeReadingIt) {
  ScratchDir dir;
  const std::string big = dir.file("big.json");
  write_text(big, "");
  // A sparse file one byte over the cap: nothing is read, however large it claims to be.
  ASSERT_EQ(::truncate(big.c_str(), kMaxTextInputBytes + 1), 0);
  EXPECT_EQ(refusal_in_child([&] { resolve_model(big, {}, 1); }),
            "model file '" + big + "' is larger than 64 MiB, the most this kind of file may have");
  EXPECT_EQ(refusal_in_child([&] { read_plan_text(big, "plan file 'big.json'"); }),
            "plan file 'big.json' is larger than 64 MiB, the most this kind of file may have");
  write_text(dir.file("small"), "12345");
  EXPECT_EQ(read_input_file(dir.file("small"), "f", 5), "12345");
  EXPECT_THROW(read_input_file(dir.file("small"), "f", 4), UsageError);
}

TEST(InputFile, AMissingFileSaysWhy) {
  EXPECT_EQ(refusal_in_child([] { read_input_file("/nonexistent/p.json", "plan file '/nonexistent/p.json'", 10); }),
            "plan file '/nonexistent/p.json' cannot be read: No such file or directory");
}

// ---------------------------------------------------------------- JSON nesting and values

std::string nested_arrays(int depth) {
  return std::string(static_cast<size_t>(depth), '[') + std::string(static_cast<size_t>(depth), ']');
}

TEST(JsonDepth, DeepNestingIsRefusedBeforeParsingAndStringsDoNotCount) {
  EXPECT_NO_THROW(check_json_depth(nested_arrays(kMaxJsonDepth), "f"));
  EXPECT_THROW(check_json_depth(nested_arrays(kMaxJsonDepth + 1), "f"), UsageError);
  EXPECT_NO_THROW(check_json_depth("{\"a\": \"" + std::string(1000, '[') + "\\\"[[\"}", "f"));
  try {
    check_json_depth(nested_arrays(200000), "plan file 'p.json'");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "plan file 'p.json': JSON nested deeper than 64 arrays and objects, the limit");
  }
}

TEST(Clipped, LongValuesAreShortenedAtACharacterBoundary) {
  EXPECT_EQ(clipped("short"), "short");
  EXPECT_EQ(clipped(std::string(1000, 'x')), std::string(60, 'x') + "...");
  // "é" is two bytes; a cut inside it backs off to before it.
  EXPECT_EQ(clipped(std::string(59, 'x') + "\xc3\xa9" + "tail"), std::string(59, 'x') + "...");
}

std::string model_text(const std::string& input, const std::string& layers, const std::string& head = "") {
  return R"({"format": "layerplan-model", "version": 1, "name": "m", )" + head + R"("input": )" + input +
         R"(, "layers": [)" + layers + "]}";
}

std::string model_error(const std::string& text, int64_t batch = 2) {
  try {
    model_from_json(text, batch, "m.json");
  } catch (const UsageError& e) {
    return e.what();
  }
  return "accepted";
}

const std::string kSmallInput = R"({"channels": 1, "height": 8, "width": 8})";

TEST(ModelFileInput, AValueNested200000DeepIsOneLineNotAStackOverflow) {
  const std::string deep = R"({"format": "layerplan-model", "version": )" + nested_arrays(200000) + "}";
  EXPECT_EQ(refusal_in_child([&] { model_from_json(deep, 1, "m.json"); }),
            "m.json: JSON nested deeper than 64 arrays and objects, the limit");
}

TEST(ModelFileInput, MistypedValuesNameTheFieldTheValueAndWhatWasExpected) {
  EXPECT_EQ(model_error(R"({"format": 5, "version": 1})"),
            "m.json: not a layerplan model file (format 5, expected \"layerplan-model\")");
  EXPECT_EQ(
      model_error(model_text(R"({"channels": 1, "height": 1e999, "width": 8})", R"({"name": "a", "kind": "relu"})")),
      "m.json: not JSON that can be read (a number beyond the range of a double, such as 1e999)");
  EXPECT_EQ(model_error(model_text(kSmallInput, R"({"name": "a", "kind": "conv2d", "out_channels": 1099511627777})")),
            "m.json: layers[0] 'a': out_channels 1099511627777: expected an integer from 1 to 1073741824");
  EXPECT_EQ(model_error(model_text(kSmallInput, R"({"name": "a", "kind": "conv2d", "out_channels": true})")),
            "m.json: layers[0] 'a': out_channels true: expected an integer from 1 to 1073741824");
  EXPECT_EQ(model_error(model_text(kSmallInput, R"({"name": "a", "kind": "conv2d", "out_channels": 4, "bias": 5})")),
            "m.json: layers[0] 'a': bias 5: expected true or false");
  const std::string long_kind(10000, 'k');
  EXPECT_THAT(model_error(model_text(kSmallInput, R"({"name": "a", "kind": ")" + long_kind + "\"}")),
              StartsWith("m.json: layers[0] 'a': unknown kind '" + std::string(60, 'k') + "...'"));
}

TEST(ModelFileInput, SizesBeyondTheLimitsAreRefusedNotWrapped) {
  // 2^30 x 2^30 x 2^30 per sample: flatten used to multiply it into 0 channels.
  const std::string cube = R"({"channels": 1073741824, "height": 1073741824, "width": 1073741824})";
  EXPECT_THAT(model_error(model_text(cube, R"({"name": "f", "kind": "flatten"})"), 64),
              HasSubstr("m.json: input: layer input: output 64x1073741824x1073741824x1073741824 has more elements "
                        "than 2^40, the limit"));
  // A fully-connected layer of 2^30 x 2^20 weights.
  EXPECT_THAT(model_error(model_text(R"({"channels": 1048576, "height": 1, "width": 1})",
                                     R"({"name": "fc", "kind": "fully_connected", "out_features": 1073741824})")),
              HasSubstr("m.json: layers[0] 'fc': layer fc: more parameters than 2^40, the limit"));
  EXPECT_EQ(model_error(model_text(kSmallInput, R"({"name": "a", "kind": "relu"})"), int64_t{1} << 62),
            "batch 4611686018427387904: expected 1 to 16777216 images");
  EXPECT_THROW(build_zoo_model("lenet5", int64_t{1} << 62), UsageError);
  EXPECT_NO_THROW(build_zoo_model("lenet5", kMaxBatch));
}

TEST(CheckedSizes, ProductsSayWhenTheyDoNotFit) {
  EXPECT_EQ(checked_product({int64_t{1} << 30, int64_t{1} << 30, 4}), int64_t{1} << 62);
  EXPECT_FALSE(checked_product({int64_t{1} << 30, int64_t{1} << 30, int64_t{1} << 30}).has_value());
  EXPECT_FALSE(checked_mul(INT64_MIN, -1).has_value());
  EXPECT_FALSE(checked_add(INT64_MAX, 1).has_value());
  EXPECT_EQ(product_within({2, 3}, 6), 6);
  EXPECT_FALSE(product_within({2, 4}, 6).has_value());
  EXPECT_FALSE(product_within({-2, 3}, 6).has_value());
  Degrees wrap;
  wrap.d = {4, 1 << 30, 1, 1};
  EXPECT_THROW(wrap.product(), std::overflow_error);
}

// ---------------------------------------------------------------- plan files

json alexnet_plan() {
  const ScratchDir dir;
  const Outcome r = run({"plan", "--model", "alexnet", "--gpus", "4", "--json", dir.file("p.json")});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  return json::parse(testing_cli::read_text(dir.file("p.json")));
}

std::string header_error(const std::string& text) {
  try {
    read_plan_header(text, "plan file 'p.json'");
  } catch (const UsageError& e) {
    return e.what();
  }
  return "accepted";
}

TEST(PlanFileInput, MistypedHeaderFieldsNameTheFieldTheValueAndWhatWasExpected) {
  json plan = alexnet_plan();
  json p = plan;
  p["batch"] = true;
  EXPECT_EQ(header_error(p.dump()), "plan file 'p.json': batch true: expected an integer from 1 to 16777216");
  p = plan;
  p["format"] = 5;
  EXPECT_EQ(header_error(p.dump()),
            "plan file 'p.json' is not a layerplan plan file (format 5, expected \"layerplan-plan\"; "
            "docs/plan-format.md)");
  p = plan;
  p["cluster"]["devices"] = (int64_t{1} << 40) + 1;
  EXPECT_EQ(header_error(p.dump()),
            "plan file 'p.json': cluster.devices 1099511627777: expected an integer from 1 to 65536");
  std::string text = plan.dump();
  text.replace(text.find("\"batch\":128"), 11, "\"batch\":1e999");
  EXPECT_EQ(header_error(text),
            "plan file 'p.json': not JSON that can be read (a number beyond the range of a double, such as 1e999)");
  p = plan;
  p["batch"] = int64_t{1} << 62;
  EXPECT_THAT(header_error(p.dump()), HasSubstr("batch 4611686018427387904: expected an integer from 1 to"));
}

TEST(PlanFileInput, DevicesAndDegreesOfALayerAreReadWithRangeChecks) {
  const json plan = alexnet_plan();
  const ModelGraph graph = alexnet(128);
  const auto error = [&](const json& p) {
    try {
      configurations_from_json(p.dump(), graph, 4);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  json p = plan;
  p["layers"][1]["devices"] = json::array({(int64_t{1} << 32) + 1});
  p["layers"][1]["degrees"] = {{"n", 1}, {"c", 1}, {"h", 1}, {"w", 1}};
  EXPECT_EQ(error(p), "plan layer conv1: device 4294967297: expected an integer from 0 to 3");
  p = plan;
  p["layers"][1]["degrees"]["n"] = "2";
  EXPECT_EQ(error(p), "plan layer conv1: degrees.n \"2\": expected an integer from 1 to 65536");
  p = plan;
  p["layers"][1]["name"] = json::array({json::array()});
  EXPECT_THAT(error(p), HasSubstr("name an array of 1 entry: expected a string"));
}

// The model of the audit: 2^30 channels, which a degree of 2^30 with 4 samples splits into
// 2^32 tiles, an int product of 0.
constexpr const char* kWideModel =
    R"({"format": "layerplan-model", "version": 1, "name": "wide",
        "input": {"channels": 1073741824, "height": 1, "width": 1},
        "layers": [{"name": "a", "kind": "relu"}]})";
constexpr const char* kWrappingPlan = R"({"format": "layerplan-plan", "version": 1, "model": "wide", "batch": 4,
  "cluster": {"devices": 4}, "layers": [
  {"name": "input", "kind": "input", "output_shape": [4, 1073741824, 1, 1],
   "degrees": {"n": 1, "c": 1, "h": 1, "w": 1}, "devices": [0]},
  {"name": "a", "kind": "relu", "output_shape": [4, 1073741824, 1, 1],
   "degrees": {"n": 4, "c": 1073741824, "h": 1, "w": 1}, "devices": []}]})";

TEST(PlanFileInput, DegreesWhoseProductWrapsAnIntAreRefused) {
  const ModelGraph graph = model_from_json(kWideModel, 4, "wide.json");
  EXPECT_EQ(refusal_in_child([&] { configurations_from_json(kWrappingPlan, graph, 4); }),
            "plan layer a: degrees.c 1073741824: expected an integer from 1 to 65536");
}

// ---------------------------------------------------------------- the command, end to end

void expect_usage_error(const Outcome& r, const std::string& text) {
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_THAT(r.err, StartsWith("layerplan: "));
  EXPECT_EQ(lines_of(r.err).size(), 1u) << r.err;
  EXPECT_THAT(r.err, HasSubstr(text));
  EXPECT_THAT(r.err, Not(HasSubstr("json.exception")));
  EXPECT_LT(r.err.size(), 400u);
}

TEST(InputHardeningCli, AModelFileNested200000DeepExitsWithTwo) {
  ScratchDir dir;
  write_text(dir.file("deep.json"), R"({"format": "layerplan-model", "version": )" + nested_arrays(200000) + "}");
  expect_usage_error(run({"plan", "--model", dir.file("deep.json"), "--gpus", "1"}), "JSON nested deeper than 64");
}

TEST(InputHardeningCli, DevZeroAsPlanOrModelIsRefusedAtOnce) {
  expect_usage_error(run({"check-plan", "/dev/zero"}), "plan file '/dev/zero' is a character device");
  expect_usage_error(run({"train", "--plan", "/dev/zero"}), "plan file '/dev/zero' is a character device");
  expect_usage_error(run({"plan", "--model", "/dev/zero"}), "model file '/dev/zero' is a character device");
}

TEST(InputHardeningCli, MistypedPlanAndModelFieldsExitWithTwo) {
  ScratchDir dir;
  json p = alexnet_plan();
  p["format"] = 5;
  write_text(dir.file("format.json"), p.dump());
  expect_usage_error(run({"check-plan", dir.file("format.json")}), "format 5, expected \"layerplan-plan\"");
  p = alexnet_plan();
  p["cluster"]["devices"] = (int64_t{1} << 40) + 1;
  write_text(dir.file("devices.json"), p.dump());
  expect_usage_error(run({"check-plan", dir.file("devices.json")}), "cluster.devices 1099511627777: expected an");
  p = alexnet_plan();
  p["batch"] = true;
  write_text(dir.file("batch.json"), p.dump());
  expect_usage_error(run({"train", "--plan", dir.file("batch.json")}), "batch true: expected an integer");
  write_text(dir.file("m.json"),
             model_text(R"({"channels": 1, "height": 1e999, "width": 8})", R"({"name": "a", "kind": "relu"})"));
  expect_usage_error(run({"plan", "--model", dir.file("m.json"), "--gpus", "1"}), "1e999");
}

TEST(InputHardeningCli, ADegreeThatWrapsTheTileCountExitsWithTwo) {
  ScratchDir dir;
  write_text(dir.file("wide.json"), kWideModel);
  write_text(dir.file("plan.json"), kWrappingPlan);
  expect_usage_error(run({"check-plan", dir.file("plan.json"), "--model", dir.file("wide.json")}),
                     "degrees.c 1073741824: expected an integer from 1 to 65536");
}

TEST(InputHardeningCli, AFlattenedCubeOfTwoToTheNinetyIsNotPlannedAsZeroChannels) {
  ScratchDir dir;
  write_text(dir.file("cube.json"),
             model_text(R"({"channels": 1073741824, "height": 1073741824, "width": 1073741824})",
                        R"({"name": "f", "kind": "flatten"}, {"name": "loss", "kind": "softmax_cross_entropy"})"));
  expect_usage_error(run({"plan", "--model", dir.file("cube.json"), "--gpus", "1", "--batch", "64"}),
                     "more elements than 2^40");
}

TEST(InputHardeningCli, ABatchNearTwoToTheSixtyThreeIsRefusedByTrain) {
  ScratchDir dir;
  ASSERT_EQ(run({"plan", "--model", "lenet5", "--gpus", "1", "--json", dir.file("p.json")}).exit_code, 0);
  json p = json::parse(testing_cli::read_text(dir.file("p.json")));
  p["batch"] = int64_t{1} << 62;
  for (json& layer : p["layers"]) layer["output_shape"][0] = int64_t{1} << 62;
  write_text(dir.file("huge.json"), p.dump());
  expect_usage_error(run({"train", "--plan", dir.file("huge.json"), "--steps", "1"}),
                     "batch 4611686018427387904: expected an integer from 1 to 16777216");
}

}  // namespace
}  // namespace layerplan
