// The training logs beside --log-json (runtime/training/training_logs.h): --log-csv and
// --tensorboard. CRC-32C against RFC 3720's vectors, the TFRecord framing and the Event
// protos byte by byte, then the files read back: the CSV as text, the event files by PyPI's
// tensorboard package (tests/tensorboard_reference.py, in the venv scripts/setup makes), from
// the library and from `layerplan train` under the launcher, where rank 0 alone writes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <ctime>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/crc32c.h"
#include "common/error.h"
#include "runtime/training/tensorboard_events.h"
#include "runtime/training/training_logs.h"
#include "tests/cli_harness.h"

namespace layerplan {
namespace {

using namespace testing_cli;
using ::testing::HasSubstr;

const std::string kPython = std::string(LAYERPLAN_PYREF) + "/bin/python3";
const std::string kReader = std::string(LAYERPLAN_SOURCE_DIR) + "/tests/tensorboard_reference.py";

std::string bytes(std::initializer_list<int> values) {
  std::string out;
  for (int v : values) out += static_cast<char>(v);
  return out;
}

uint32_t little_endian32(const std::string& s, size_t at) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(s[at + static_cast<size_t>(i)]);
  return v;
}

// RFC 3720, appendix B.4, and the check value of the CRC catalogues.
TEST(Crc32c, MatchesTheKnownVectors) {
  EXPECT_EQ(crc32c("123456789"), 0xE3069283U);
  EXPECT_EQ(crc32c(""), 0U);
  EXPECT_EQ(crc32c(std::string(32, '\0')), 0x8A9136AAU);
  EXPECT_EQ(crc32c(std::string(32, '\xFF')), 0x62A8AB43U);
  std::string up, down;
  for (int i = 0; i < 32; ++i) {
    up += static_cast<char>(i);
    down += static_cast<char>(31 - i);
  }
  EXPECT_EQ(crc32c(up), 0x46DD794EU);
  EXPECT_EQ(crc32c(down), 0x113FDB5CU);
}

TEST(TfRecord, FramesTheDataWithItsLengthAndMaskedCrcs) {
  // The mask: rotated right by 15 bits, plus 0xA282EAD8 (0 rotates to 0).
  EXPECT_EQ(masked_crc32c(""), 0xA282EAD8U);
  EXPECT_EQ(masked_crc32c("123456789"), ((0xE3069283U >> 15) | (0xE3069283U << 17)) + 0xA282EAD8U);
  const std::string record = tfrecord("abc");
  ASSERT_EQ(record.size(), 8u + 4 + 3 + 4);
  EXPECT_EQ(record.substr(0, 8), bytes({3, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(little_endian32(record, 8), masked_crc32c(record.substr(0, 8)));
  EXPECT_EQ(record.substr(12, 3), "abc");
  EXPECT_EQ(little_endian32(record, 15), masked_crc32c("abc"));
  EXPECT_EQ(tfrecord("").size(), 16u);
}

TEST(TensorBoardEvents, EncodesTheEventFieldsInTheWireFormat) {
  const std::string wall_time = bytes({0x09, 0, 0, 0, 0, 0, 0, 0xF8, 0x3F});  // field 1, double 1.5
  EXPECT_EQ(file_version_event(1.5), wall_time + bytes({0x1A, 13}) + "brain.Event:2");
  // Summary{value{tag "a", simple_value 2}} at step 300 (a two-byte varint).
  const std::string value = bytes({0x0A, 1, 'a', 0x15, 0, 0, 0, 0x40});
  const std::string summary = bytes({0x0A, 8}) + value;
  EXPECT_EQ(scalars_event(1.5, 300, {{"a", 2.0F}}), wall_time + bytes({0x10, 0xAC, 0x02, 0x2A, 10}) + summary);
  // Two values: two Summary.Value fields, in order.
  const std::string two = scalars_event(1.5, 1, {{"a", 2.0F}, {"b", -1.0F}});
  EXPECT_EQ(two,
            wall_time + bytes({0x10, 1, 0x2A, 20}) + summary + bytes({0x0A, 8, 0x0A, 1, 'b', 0x15, 0, 0, 0x80, 0xBF}));
}

TEST(TensorBoardEvents, NamesFilesAsTensorBoardsWriters) {
  EXPECT_EQ(event_file_name(1700000000, "node7", 4242), "events.out.tfevents.1700000000.node7.4242");
  EXPECT_EQ(event_file_name(123, "h", 1), "events.out.tfevents.0000000123.h.1");
}

// What tests/tensorboard_reference.py printed for `dir`, and its exit status.
struct Read {
  int status = -1;
  std::string text;
  nlohmann::json json;
};

Read read_with_tensorboard(const fs::path& dir) {
  const ScratchDir scratch;
  const fs::path out = scratch.path() / "read.txt";
  const std::string command =
      quote(kPython) + " " + quote(kReader) + " " + quote(dir.string()) + " >" + quote(out.string()) + " 2>&1";
  Read r;
  r.status = std::system(command.c_str());
  r.text = read_text(out);
  if (r.status == 0) r.json = nlohmann::json::parse(r.text, nullptr, false);
  return r;
}

TEST(TensorBoardReference, TheReaderIsInstalled) {
  ASSERT_TRUE(fs::exists(kPython)) << kPython << " is missing: scripts/setup --test makes it";
  ScratchDir dir;
  const Read r = read_with_tensorboard(dir.path());  // an empty folder
  EXPECT_EQ(r.status, 0) << r.text << "\nscripts/setup --test installs tensorboard in " << LAYERPLAN_PYREF;
  EXPECT_EQ(r.json["files"], nlohmann::json::array()) << r.text;
}

TEST(TrainingLogs, WriteTheSameRecordsAsCsvAndTensorBoardEvents) {
  ScratchDir dir;
  TrainerOptions options;
  options.log_json = dir.file("log.jsonl");
  options.log_csv = dir.file("log.csv");
  options.tensorboard = dir.file("tb");
  check_training_log_paths(options);  // makes the folder
  ASSERT_TRUE(fs::is_directory(*options.tensorboard));
  {
    TrainingLogs logs(options);
    // Each file is in place, the CSV with its header, before the first record.
    EXPECT_EQ(read_text(*options.log_csv), std::string(kTrainingCsvHeader) + "\n");
    EXPECT_EQ(read_text(*options.log_json), "");
    logs.step({.step = 1, .epoch = 1, .loss = 2.5, .lr = 0.1, .images_per_s = 1000});
    logs.step({.step = 2, .epoch = 1, .loss = 1.0 / 3, .lr = 0.05, .images_per_s = 1234.5});
    logs.evaluated({.step = 2, .epoch = 1, .accuracy = 0.75, .correct = 12, .images = 16, .loss = 0.625});
    logs.step({.step = 3, .epoch = 2, .loss = 0.125, .lr = 1e-3, .images_per_s = 99});
  }
  EXPECT_EQ(read_text(*options.log_csv),
            "step,epoch,loss,lr,images_per_s,test_loss,test_accuracy\n"
            "1,1,2.5,0.1,1000,,\n"
            "2,1,0.3333333333333333,0.05,1234.5,,\n"
            "2,1,,,,0.625,0.75\n"
            "3,2,0.125,0.001,99,,\n");
  EXPECT_EQ(lines_of(read_text(*options.log_json)).size(), 4u);

  ASSERT_EQ(std::distance(fs::directory_iterator(*options.tensorboard), fs::directory_iterator{}), 1);
  const Read r = read_with_tensorboard(*options.tensorboard);
  ASSERT_EQ(r.status, 0) << r.text;
  ASSERT_FALSE(r.json.is_discarded()) << r.text;
  EXPECT_EQ(r.json["file_versions"], nlohmann::json::array({"brain.Event:2"}));
  EXPECT_EQ(r.json["records"], 5);  // the version, three steps, one evaluation
  const nlohmann::json& s = r.json["scalars"];
  const auto series = [&](const std::string& tag) {
    std::vector<std::pair<int64_t, float>> points;
    for (const nlohmann::json& p : s.at(tag)) points.emplace_back(p[0].get<int64_t>(), p[1].get<float>());
    return points;
  };
  using Points = std::vector<std::pair<int64_t, float>>;
  EXPECT_EQ(series("train/loss"), (Points{{1, 2.5F}, {2, 1.0F / 3}, {3, 0.125F}}));
  EXPECT_EQ(series("train/lr"), (Points{{1, 0.1F}, {2, 0.05F}, {3, 1e-3F}}));
  EXPECT_EQ(series("train/images_per_s"), (Points{{1, 1000.0F}, {2, 1234.5F}, {3, 99.0F}}));
  EXPECT_EQ(series("train/epoch"), (Points{{1, 1.0F}, {2, 1.0F}, {3, 2.0F}}));
  EXPECT_EQ(series("test/accuracy"), (Points{{2, 0.75F}}));
  EXPECT_EQ(series("test/loss"), (Points{{2, 0.625F}}));
  EXPECT_EQ(s.size(), 6u) << s.dump();
  // Wall times are seconds since 1970, now.
  const double now = static_cast<double>(std::time(nullptr));
  for (const nlohmann::json& p : s.at("train/loss")) EXPECT_NEAR(p[2].get<double>(), now, 60);
}

// The reader is not lenient: one byte changed in a record's data fails its CRC.
TEST(TrainingLogs, TheReaderRefusesAnEventFileWithABadCrc) {
  ScratchDir dir;
  TrainerOptions options;
  options.tensorboard = dir.file("tb");
  check_training_log_paths(options);
  std::string path;
  {
    TrainingLogs logs(options);
    logs.step({.step = 1, .epoch = 1, .loss = 2.5, .lr = 0.1, .images_per_s = 1000});
  }
  for (const auto& entry : fs::directory_iterator(*options.tensorboard)) path = entry.path().string();
  ASSERT_EQ(read_with_tensorboard(*options.tensorboard).status, 0);
  std::string text = read_text(path);
  text[text.size() - 6] = static_cast<char>(text[text.size() - 6] ^ 0x01);  // in the last value's float
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  const Read r = read_with_tensorboard(*options.tensorboard);
  EXPECT_NE(r.status, 0) << r.text;
  EXPECT_THAT(r.text, HasSubstr("crc32 check"));
}

TEST(TrainingLogs, BadPathsAreRefusedBeforeAnythingIsWritten) {
  ScratchDir dir;
  const auto message = [](const TrainerOptions& options) {
    try {
      check_training_log_paths(options);
      TrainingLogs logs(options);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  TrainerOptions csv_in_missing_folder;
  csv_in_missing_folder.log_csv = dir.file("missing/log.csv");
  EXPECT_THAT(message(csv_in_missing_folder),
              HasSubstr("--log-csv '" + dir.file("missing/log.csv") + "': no directory"));
  TrainerOptions csv_is_folder;
  csv_is_folder.log_csv = dir.path().string();
  EXPECT_THAT(message(csv_is_folder), HasSubstr("is a folder"));
  write_text(dir.path() / "file", "x");
  TrainerOptions tensorboard_is_file;
  tensorboard_is_file.tensorboard = dir.file("file");
  tensorboard_is_file.log_json = dir.file("log.jsonl");
  EXPECT_THAT(message(tensorboard_is_file),
              HasSubstr("--tensorboard '" + dir.file("file") + "': expected a folder that exists or can be made"));
  EXPECT_FALSE(fs::exists(dir.file("log.jsonl")));
}

// A LeNet-5 plan for `gpus` devices, a global batch of 8.
fs::path lenet_plan(const ScratchDir& dir, int gpus) {
  const fs::path file = dir.path() / ("lenet-" + std::to_string(gpus) + ".json");
  const Outcome r = run({"plan", "--model", "lenet5", "--batch", "8", "--gpus", std::to_string(gpus), "--gpus-per-node",
                         std::to_string(gpus), "--json", file.string()});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  return file;
}

std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> fields(1);
  for (char c : line) {
    if (c == ',') {
      fields.emplace_back();
    } else {
      fields.back().push_back(c);
    }
  }
  return fields;
}

// Two ranks train 3 steps of Fashion-MNIST (Debian's dataset-fashion-mnist) with a cosine
// schedule and evaluate at the end: rank 0 alone writes one CSV and one event file, and the
// three logs agree with each other and with the schedule.
TEST(TrainLogsCommand, TwoRanksWriteOneCsvAndOneEventFileThatAgree) {
  ScratchDir dir;
  const fs::path plan = lenet_plan(dir, 2);
  const fs::path csv = dir.path() / "log.csv", json = dir.path() / "log.jsonl", tb = dir.path() / "runs" / "a";
  const Outcome r = run({"launch",        "--nproc",   "2",           "--",         kBinary,
                         "train",         "--plan",    plan.string(), "--data",     "fashion-mnist",
                         "--steps",       "3",         "--lr",        "0.05",       "--lr-schedule",
                         "cosine",        "--log-csv", csv.string(),  "--log-json", json.string(),
                         "--tensorboard", tb.string()},
                        {"OMP_NUM_THREADS=1"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);

  const std::vector<std::string> rows = lines_of(read_text(csv));
  ASSERT_EQ(rows.size(), 5u) << read_text(csv);  // header, 3 steps, the evaluation at the end
  EXPECT_EQ(rows[0], kTrainingCsvHeader);
  const std::vector<std::string> json_lines = lines_of(read_text(json));
  ASSERT_EQ(json_lines.size(), 4u);
  std::vector<double> losses;
  for (int s = 1; s <= 3; ++s) {
    const std::vector<std::string> f = split_csv(rows[static_cast<size_t>(s)]);
    ASSERT_EQ(f.size(), 7u) << rows[static_cast<size_t>(s)];
    EXPECT_EQ(f[0], std::to_string(s));
    EXPECT_EQ(f[1], "1");
    EXPECT_EQ(std::stod(f[2]), nlohmann::json::parse(json_lines[static_cast<size_t>(s) - 1]).at("loss").get<double>());
    EXPECT_NEAR(std::stod(f[3]), 0.05 * 0.5 * (1 + std::cos(M_PI * (s - 1) / 3.0)), 1e-15) << "step " << s;
    EXPECT_GT(std::stod(f[4]), 0);
    EXPECT_EQ(f[5], "");
    EXPECT_EQ(f[6], "");
    losses.push_back(std::stod(f[2]));
  }
  const std::vector<std::string> test = split_csv(rows[4]);
  ASSERT_EQ(test.size(), 7u) << rows[4];
  EXPECT_EQ(test[0], "3");
  EXPECT_EQ(test[2] + test[3] + test[4], "");
  const double accuracy = std::stod(test[6]);
  EXPECT_GT(accuracy, 0);
  EXPECT_LE(accuracy, 1);
  EXPECT_EQ(accuracy, nlohmann::json::parse(json_lines[3]).at("test_accuracy").get<double>());

  const Read read = read_with_tensorboard(tb);
  ASSERT_EQ(read.status, 0) << read.text;
  ASSERT_EQ(read.json["files"].size(), 1u) << read.text;  // rank 1 wrote none
  EXPECT_THAT(read.json["files"][0].get<std::string>(), ::testing::StartsWith("events.out.tfevents."));
  const nlohmann::json& loss = read.json["scalars"]["train/loss"];
  ASSERT_EQ(loss.size(), 3u) << read.text;
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(loss[i][0], static_cast<int>(i) + 1);
    EXPECT_EQ(loss[i][1].get<float>(), static_cast<float>(losses[i]));
  }
  const nlohmann::json& test_accuracy = read.json["scalars"]["test/accuracy"];
  ASSERT_EQ(test_accuracy.size(), 1u) << read.text;
  EXPECT_EQ(test_accuracy[0][0], 3);
  EXPECT_EQ(test_accuracy[0][1].get<float>(), static_cast<float>(accuracy));
}

TEST(TrainLogsCommand, ABadLogPathIsOneLineAndExit2BeforeTraining) {
  ScratchDir dir;
  const fs::path plan = lenet_plan(dir, 1);
  write_text(dir.path() / "taken", "a file");
  const std::vector<std::string> train = {"train", "--plan", plan.string(), "--steps", "2", "--kernels", "reference"};
  const auto with = [&](const std::vector<std::string>& more) {
    std::vector<std::string> args = train;
    args.insert(args.end(), more.begin(), more.end());
    return run(args);
  };
  Outcome r = with({"--log-csv", (dir.path() / "no" / "log.csv").string()});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_EQ(lines_of(r.err).size(), 1u) << r.err;
  EXPECT_THAT(r.err, HasSubstr("--log-csv '" + (dir.path() / "no" / "log.csv").string() + "': no directory"));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("step 1/2")));

  r = with({"--tensorboard", (dir.path() / "taken").string(), "--log-csv", (dir.path() / "log.csv").string()});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_EQ(lines_of(r.err).size(), 1u) << r.err;
  EXPECT_THAT(r.err, HasSubstr("--tensorboard '" + (dir.path() / "taken").string() + "': expected a folder"));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("step 1/2")));
  EXPECT_FALSE(fs::exists(dir.path() / "log.csv"));
}

}  // namespace
}  // namespace layerplan
