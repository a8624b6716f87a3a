// Every file layerplan writes goes through common/safe_write.h. For each writer (the
// helper itself, safetensors files, and every flag of the CLI that writes a file), a
// symbolic link planted at each temporary name a writer used to pick (PATH.tmp,
// PATH.partial) or at the final path, pointing at a file elsewhere, leaves that file as it
// was: planted temporary names are ignored, a link at the final path is refused with exit 2
// and one line naming the path, and no temporary file is left behind.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "common/error.h"
#include "common/safe_write.h"
#include "runtime/safetensors.h"
#include "tests/cli_harness.h"

namespace layerplan {
namespace {

using namespace testing_cli;
using ::testing::HasSubstr;
using ::testing::StartsWith;

const std::string kPrecious = "precious\n";
// The temporary names the writers used before common/safe_write.h.
const std::vector<std::string> kOldTempSuffixes = {".tmp", ".partial"};

// A file outside the folder written to, which no writer may change.
class Victim {
 public:
  Victim() { write_text(path(), kPrecious); }
  fs::path path() const { return dir_.path() / "victim"; }
  bool untouched() const { return read_text(path()) == kPrecious; }

 private:
  ScratchDir dir_;
};

void plant_links_at_old_temp_names(const fs::path& file, const Victim& victim) {
  for (const std::string& suffix : kOldTempSuffixes) fs::create_symlink(victim.path(), file.string() + suffix);
}

// The names in `dir`.
std::set<std::string> names_in(const fs::path& dir) {
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.insert(entry.path().filename().string());
  return names;
}

// `file`'s name and the links planted at its old temporary names: nothing else is left.
std::set<std::string> expected_names(const fs::path& file) {
  std::set<std::string> names = {file.filename().string()};
  for (const std::string& suffix : kOldTempSuffixes) names.insert(file.filename().string() + suffix);
  return names;
}

TEST(SafeWrite, WritesTheWholeFileWithItsModeAndNothingElse) {
  ScratchDir dir;
  const fs::path file = dir.path() / "a.txt";
  const mode_t old_mask = ::umask(022);
  write_file_safely(file.string(), "hello\n", "--out", 0640);
  ::umask(old_mask);
  EXPECT_EQ(read_text(file), "hello\n");
  struct stat st {};
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  EXPECT_EQ(names_in(dir.path()), std::set<std::string>{"a.txt"});
  write_file_safely(file.string(), "again\n", "--out");  // replaces the file
  EXPECT_EQ(read_text(file), "again\n");
  EXPECT_EQ(names_in(dir.path()), std::set<std::string>{"a.txt"});
}

TEST(SafeWrite, LinksAtTheOldTemporaryNamesAreNotFollowed) {
  ScratchDir dir;
  const Victim victim;
  const fs::path file = dir.path() / "a.txt";
  plant_links_at_old_temp_names(file, victim);
  write_file_safely(file.string(), "hello\n", "--out");
  EXPECT_TRUE(victim.untouched());
  EXPECT_FALSE(fs::is_symlink(file));
  EXPECT_EQ(read_text(file), "hello\n");
  EXPECT_EQ(names_in(dir.path()), expected_names(file));
}

TEST(SafeWrite, ALinkAtTheFinalPathIsRefusedNamingThePathAndTheFlag) {
  ScratchDir dir;
  const Victim victim;
  const fs::path file = dir.path() / "a.txt";
  fs::create_symlink(victim.path(), file);
  try {
    write_file_safely(file.string(), "hello\n", "--out");
    ADD_FAILURE() << "a symbolic link at the final path was accepted";
  } catch (const UsageError& e) {
    EXPECT_THAT(std::string(e.what()), StartsWith("--out '" + file.string() + "': is a symbolic link"));
  }
  EXPECT_THROW(check_output_path(file.string(), "--out"), UsageError);
  EXPECT_TRUE(victim.untouched());
  EXPECT_TRUE(fs::is_symlink(file));
  EXPECT_EQ(names_in(dir.path()), std::set<std::string>{"a.txt"});
}

TEST(SafeWrite, AnUnpublishedFileLeavesTheOldOneAndNoTemporaryFile) {
  ScratchDir dir;
  const fs::path file = dir.path() / "a.txt";
  write_text(file, "old\n");
  {
    NewFile half(file.string(), "--out");
    half.write("half of it");
  }  // e.g. an exception before publish()
  EXPECT_EQ(read_text(file), "old\n");
  EXPECT_EQ(names_in(dir.path()), std::set<std::string>{"a.txt"});
}

TEST(SafeWrite, AMissingFolderOrAFolderAsTheFileIsAUsageErrorNamingIt) {
  ScratchDir dir;
  const std::string missing = (dir.path() / "no" / "a.txt").string();
  try {
    write_file_safely(missing, "x", "--json");
    ADD_FAILURE() << "no error";
  } catch (const UsageError& e) {
    EXPECT_THAT(std::string(e.what()), StartsWith("--json '" + missing + "': cannot open the folder"));
  }
  EXPECT_THROW(write_file_safely(dir.path().string(), "x", "--json"), UsageError);
  EXPECT_THROW(write_file_safely(dir.path().string() + "/", "x", "--json"), UsageError);
  EXPECT_TRUE(names_in(dir.path()).empty());
}

TEST(SafeWrite, PublishIfAbsentNeverReplacesAFile) {
  ScratchDir dir;
  const fs::path file = dir.path() / "a.txt";
  write_text(file, "first\n");
  NewFile second(file.string(), "--out");
  second.write("second\n");
  EXPECT_FALSE(second.publish_if_absent());
  EXPECT_EQ(read_text(file), "first\n");
  fs::remove(file);
  EXPECT_TRUE(second.publish_if_absent());
  EXPECT_EQ(read_text(file), "second\n");
}

// The training log: put in place empty, then appended to line by line.
TEST(SafeWrite, WritesAfterPublishingGoToTheFileInPlace) {
  ScratchDir dir;
  const fs::path file = dir.path() / "log.jsonl";
  write_text(file, "an old run\n");
  NewFile log(file.string(), "--log-json");
  log.publish();
  EXPECT_EQ(read_text(file), "");
  log.write("line 1\n");
  log.write("line 2\n");
  EXPECT_EQ(read_text(file), "line 1\nline 2\n");
}

TEST(SafeWrite, SafetensorsFilesIgnoreOldTemporaryNamesAndRefuseALinkAtTheirPath) {
  ScratchDir dir;
  const Victim victim;
  const fs::path file = dir.path() / "w.safetensors";
  safetensors::Contents contents;
  const std::vector<float> values = {1.0f, 2.0f};
  contents.tensors["w"] = safetensors::Tensor::from_floats({2}, values);
  plant_links_at_old_temp_names(file, victim);
  safetensors::write_file(file.string(), contents, "--save");
  EXPECT_TRUE(victim.untouched());
  EXPECT_EQ(safetensors::read_file(file.string()).tensors.at("w").floats(), values);
  EXPECT_EQ(names_in(dir.path()), expected_names(file));
  fs::remove(file);
  fs::create_symlink(victim.path(), file);
  EXPECT_THROW(safetensors::write_file(file.string(), contents, "--save"), UsageError);
  EXPECT_TRUE(victim.untouched());
}

// Each flag that writes a file, as the command line to run with OUT as its path.
struct Writer {
  std::string name;
  std::function<std::vector<std::string>(const std::string& out)> args;
  std::vector<std::string> beside = {};  // files it also writes, named after out: "out" + each
};

class CliWriters : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    inputs_ = new ScratchDir;
    plan_ = inputs_->file("plan.json");
    const Outcome r = run({"plan", "--model", "lenet5", "--batch", "8", "--gpus", "1", "--json", plan_});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
  }
  static void TearDownTestSuite() { delete inputs_; }

  static std::vector<Writer> writers() {
    const std::vector<std::string> plan = {"plan", "--model", "lenet5", "--gpus", "2", "--batch", "16"};
    const std::vector<std::string> train = {"train",   "--plan", plan_,       "--data",   "synthetic",
                                            "--steps", "2",      "--kernels", "reference"};
    const auto with = [](std::vector<std::string> a, const std::vector<std::string>& b) {
      a.insert(a.end(), b.begin(), b.end());
      return a;
    };
    return {
        {"plan --json",
         [=](const std::string& out) {
           return with(plan, {"--json", out});
         }},
        {"plan --report",
         [=](const std::string& out) {
           return with(plan, {"--report", out});
         }},
        {"plan --trace",
         [=](const std::string& out) {
           return with(plan, {"--trace", out});
         }},
        {"topo --json",
         [](const std::string& out) {
           return std::vector<std::string>{"topo", "--topology-xml",
                                           data_file("topologies/mpibind-aws-g4dn-metal-8xt4-pcie-efa.xml"), "--json",
                                           out};
         }},
        {"report -o",
         [](const std::string& out) {
           return std::vector<std::string>{"report", plan_, "--no-scaling", "-o", out};
         }},
        {"predict --json",
         [](const std::string& out) {
           return std::vector<std::string>{"predict", "--plan",        plan_, "--steps",
                                           "2",       "--link-gbytes", "1",   "--link-latency-us",
                                           "100",     "--json",        out};
         }},
        {"train --profile",
         [=](const std::string& out) {
           return with(train, {"--profile", out});
         }},
        {"train --trace",
         [=](const std::string& out) {
           return with(train, {"--trace", out});
         }},
        {"train --log-json",
         [=](const std::string& out) {
           return with(train, {"--log-json", out});
         }},
        {"train --log-csv",
         [=](const std::string& out) {
           return with(train, {"--log-csv", out});
         }},
        {"train --save",
         [=](const std::string& out) {
           return with(train, {"--save", out});
         },
         {".optimizer.safetensors"}},  // the momentum, beside the weights
    };
  }

  static ScratchDir* inputs_;
  static std::string plan_;
};

ScratchDir* CliWriters::inputs_ = nullptr;
std::string CliWriters::plan_;

TEST_F(CliWriters, LinksAtTheOldTemporaryNamesAreNotFollowed) {
  for (const Writer& writer : writers()) {
    ScratchDir dir;
    const Victim victim;
    const fs::path file = dir.path() / "out";
    plant_links_at_old_temp_names(file, victim);
    const Outcome r = run(writer.args(file.string()), {"OMP_NUM_THREADS=1"});
    EXPECT_EQ(r.exit_code, 0) << writer.name << "\n" << describe(r);
    EXPECT_TRUE(victim.untouched()) << writer.name << " wrote through a link at a temporary name";
    EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(file))) << writer.name;
    EXPECT_GT(fs::file_size(file), 0u) << writer.name;
    std::set<std::string> expected = expected_names(file);
    for (const std::string& suffix : writer.beside) expected.insert(file.filename().string() + suffix);
    EXPECT_EQ(names_in(dir.path()), expected) << writer.name;
  }
}

TEST_F(CliWriters, ALinkAtTheFinalPathIsRefusedWithOneLineAndExit2) {
  for (const Writer& writer : writers()) {
    ScratchDir dir;
    const Victim victim;
    const fs::path file = dir.path() / "out";
    fs::create_symlink(victim.path(), file);
    const Outcome r = run(writer.args(file.string()), {"OMP_NUM_THREADS=1"});
    EXPECT_EQ(r.exit_code, 2) << writer.name << "\n" << describe(r);
    EXPECT_EQ(lines_of(r.err).size(), 1u) << writer.name << "\n" << r.err;
    EXPECT_THAT(r.err, HasSubstr("'" + file.string() + "': is a symbolic link")) << writer.name;
    EXPECT_TRUE(victim.untouched()) << writer.name << " wrote through a link at its path";
    EXPECT_TRUE(fs::is_symlink(file)) << writer.name;
    EXPECT_EQ(names_in(dir.path()), std::set<std::string>{"out"}) << writer.name;
  }
}

// The acceptance case: a folder everyone may write to, and another user's link at p.json.tmp.
TEST_F(CliWriters, PlanJsonIntoAWorldWritableFolderLeavesAPlantedTmpLinksTargetUnchanged) {
  ScratchDir dir;
  const Victim victim;
  fs::permissions(dir.path(), fs::perms::all);
  const fs::path file = dir.path() / "p.json";
  fs::create_symlink(victim.path(), file.string() + ".tmp");
  const Outcome r = run({"plan", "--model", "lenet5", "--gpus", "2", "--batch", "16", "--json", file.string()});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_TRUE(victim.untouched());
  EXPECT_THAT(read_text(file), HasSubstr("\"layerplan-plan\""));
}

}  // namespace
}  // namespace layerplan
