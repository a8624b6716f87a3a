// Planning a step once for the nodes that share the plan folder (spank_plugin/plan_once.h):
// processes that race for the lock (one plans, the others take its plan), node-local
// folders (each plans), a winner that fails, dies or never finishes, stale files of an
// earlier job, and folders others may write to.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "spank_plugin/plan_once.h"

namespace layerplan::spank {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void append_line(const fs::path& p, const std::string& line) {
  const int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) return;
  const std::string text = line + "\n";
  (void)!::write(fd, text.data(), text.size());
  ::close(fd);
}

class PlanOnceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("spank_plan_once_" + std::to_string(::getpid()) + "_" +
                                             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "plans");
    fs::permissions(dir_ / "plans", fs::perms::owner_all);
  }
  void TearDown() override { fs::remove_all(dir_); }

  PlanOnceSetup setup(const std::string& label, const fs::path& folder, double wait_s = 10.0) const {
    PlanOnceSetup s;
    s.folder = folder.string();
    s.stem = "layerplan-12.0.0123456789abcdef";
    s.node_label = label;
    s.step_start = std::time(nullptr);
    s.wait_s = wait_s;
    s.poll_s = 0.01;
    return s;
  }
  fs::path plans() const { return dir_ / "plans"; }
  fs::path lock() const { return plans() / ".layerplan-12.0.0123456789abcdef.lock"; }
  fs::path marker() const { return plans() / ".layerplan-12.0.0123456789abcdef.done"; }

  // A plan_here() that notes each call in `calls`, takes `delay_s`, and names `who`.
  std::function<ChildReport()> planner(const std::string& who, double delay_s = 0.0) const {
    const fs::path calls = dir_ / "calls";
    const fs::path folder = plans();
    return [calls, folder, who, delay_s] {
      append_line(calls, who);
      std::this_thread::sleep_for(std::chrono::duration<double>(delay_s));
      ChildReport r;
      r.plan_path = folder.string() + "/layerplan-12.0.json";
      std::ofstream(r.plan_path) << "plan by " << who;
      r.environment = {{"LAYERPLAN_PLAN", r.plan_path}, {"LAYERPLAN_MODE", "auto"}};
      r.summary = "planned by " + who;
      r.explain = {"layerplan: table of " + who};
      return r;
    };
  }
  std::vector<std::string> calls() const {
    std::vector<std::string> out;
    std::istringstream in(read(dir_ / "calls"));
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
  }

  // Runs plan_once() in `count` forked processes at once, node i in folders[i]; returns
  // each one's "ORIGIN|SUMMARY".
  std::vector<std::string> race(int count, const std::vector<fs::path>& folders) const {
    std::vector<pid_t> pids;
    for (int i = 0; i < count; ++i) {
      const pid_t pid = ::fork();
      if (pid == 0) {
        const std::string label = "node " + std::to_string(i);
        std::string line;
        try {
          const ChildReport r = plan_once(setup(label, folders[static_cast<size_t>(i)]), planner(label, 0.3));
          line = r.origin + "|" + r.summary;
        } catch (const std::exception& e) {
          line = std::string("threw ") + e.what();
        }
        std::ofstream(dir_ / ("result-" + std::to_string(i))) << line;
        ::_exit(0);
      }
      pids.push_back(pid);
    }
    for (const pid_t pid : pids) {
      int status = 0;
      ::waitpid(pid, &status, 0);
    }
    std::vector<std::string> results;
    for (int i = 0; i < count; ++i) results.push_back(read(dir_ / ("result-" + std::to_string(i))));
    return results;
  }

  fs::path dir_;
};

TEST_F(PlanOnceTest, ThreeProcessesSharingTheFolderPlanOnce) {
  const auto results = race(3, {plans(), plans(), plans()});
  ASSERT_EQ(calls().size(), 1U) << "plan_here() ran more than once";
  const std::string winner = calls().front();
  int here = 0, from = 0;
  for (const std::string& r : results) {
    if (r == "planned here|planned by " + winner) ++here;
    if (r == "plan from " + winner + "|planned by " + winner) ++from;
  }
  EXPECT_EQ(here, 1) << ::testing::PrintToString(results);
  EXPECT_EQ(from, 2) << ::testing::PrintToString(results);
  EXPECT_TRUE(fs::exists(lock()));
  EXPECT_TRUE(fs::exists(marker()));
}

TEST_F(PlanOnceTest, NodeLocalFoldersEachPlan) {
  std::vector<fs::path> folders;
  for (int i = 0; i < 3; ++i) {
    folders.push_back(dir_ / ("local" + std::to_string(i)));
    fs::create_directories(folders.back());
    fs::permissions(folders.back(), fs::perms::owner_all);
  }
  const auto results = race(3, folders);
  EXPECT_EQ(calls().size(), 3U);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(results[static_cast<size_t>(i)], "planned here|planned by node " + std::to_string(i));
  }
}

TEST_F(PlanOnceTest, ALaterNodeTakesTheFinishedPlanAndItsExplainTable) {
  EXPECT_EQ(plan_once(setup("node 0 (a)", plans()), planner("node 0 (a)")).origin, "planned here");
  const ChildReport r = plan_once(setup("node 1 (b)", plans()), planner("node 1 (b)"));
  EXPECT_EQ(r.origin, "plan from node 0 (a)");
  EXPECT_EQ(r.summary, "planned by node 0 (a)");
  EXPECT_EQ(r.explain, std::vector<std::string>{"layerplan: table of node 0 (a)"});
  EXPECT_EQ(calls(), std::vector<std::string>{"node 0 (a)"});
}

// The winner may name the shared folder by another path (another mount point): the
// plan file is taken by its name in our folder, and LAYERPLAN_PLAN says our path.
TEST_F(PlanOnceTest, TheWinnersPlanFileIsNamedByOurPathToTheFolder) {
  plan_once(setup("node 0 (a)", plans()), planner("node 0 (a)"));
  fs::create_directory_symlink(plans(), dir_ / "mounted-elsewhere");
  const ChildReport r = plan_once(setup("node 1 (b)", dir_ / "mounted-elsewhere"), planner("node 1 (b)"));
  const std::string ours = (dir_ / "mounted-elsewhere" / "layerplan-12.0.json").string();
  EXPECT_EQ(r.origin, "plan from node 0 (a)");
  EXPECT_EQ(r.plan_path, ours);
  EXPECT_EQ(r.environment.front(), (std::pair<std::string, std::string>{"LAYERPLAN_PLAN", ours}));
}

TEST_F(PlanOnceTest, AMarkerWhosePlanFileIsMissingIsNotTrusted) {
  plan_once(setup("node 0 (a)", plans()), planner("node 0 (a)"));
  fs::remove(plans() / "layerplan-12.0.json");
  const ChildReport r = plan_once(setup("node 1 (b)", plans()), planner("node 1 (b)"));
  EXPECT_EQ(r.origin, "planned here: the plan file of node 0 (a) is not in this folder");
  EXPECT_EQ(r.summary, "planned by node 1 (b)");
}

TEST_F(PlanOnceTest, AWinnerThatFailsLetsTheOthersPlanAtOnce) {
  EXPECT_THROW(plan_once(setup("node 0 (a)", plans()), []() -> ChildReport { throw std::runtime_error("no model"); }),
               std::runtime_error);
  const Clock::time_point t0 = Clock::now();
  const ChildReport r = plan_once(setup("node 1 (b)", plans(), 30.0), planner("node 1 (b)"));
  EXPECT_EQ(r.origin, "planned here: node 0 (a) could not plan");
  EXPECT_EQ(r.summary, "planned by node 1 (b)");
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - t0).count(), 5.0);
}

TEST_F(PlanOnceTest, AWinnerThatNeverFinishesIsWaitedForWithinTheBound) {
  // A lock held by a live process on another host, and no marker.
  std::ofstream(lock()) << "node 0 (elsewhere)\nanother-host\n" << ::getpid() << "\n";
  const Clock::time_point t0 = Clock::now();
  const ChildReport r = plan_once(setup("node 1 (b)", plans(), 0.5), planner("node 1 (b)"));
  const double waited = std::chrono::duration<double>(Clock::now() - t0).count();
  EXPECT_EQ(r.origin, "planned here: shared plan not ready after 0.5 s");
  EXPECT_GE(waited, 0.5);
  EXPECT_LT(waited, 3.0);
  EXPECT_EQ(calls(), std::vector<std::string>{"node 1 (b)"});
}

TEST_F(PlanOnceTest, AWinnerThatDiedOnThisHostIsNotWaitedFor) {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  ::waitpid(pid, nullptr, 0);  // reaped: the pid names no process now
  char host[256] = {};
  ASSERT_EQ(::gethostname(host, sizeof host - 1), 0);
  std::ofstream(lock()) << "node 0 (a)\n" << host << "\n" << pid << "\n";
  const Clock::time_point t0 = Clock::now();
  const ChildReport r = plan_once(setup("node 1 (b)", plans(), 30.0), planner("node 1 (b)"));
  EXPECT_EQ(r.origin, "planned here: node 0 (a) stopped before its plan was ready");
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - t0).count(), 5.0);
}

TEST_F(PlanOnceTest, StaleFilesOfAnEarlierJobWithTheSameIdAreReplaced) {
  // An earlier job 12's step 0 left its lock and its marker two minutes before this step.
  plan_once(setup("node 0 (old)", plans()), planner("node 0 (old)"));
  const std::time_t start = std::time(nullptr);
  for (const fs::path& p : {lock(), marker()}) {
    const struct timespec times[2] = {{start - 120, 0}, {start - 120, 0}};
    ASSERT_EQ(::utimensat(AT_FDCWD, p.c_str(), times, 0), 0);
  }
  const ChildReport r = plan_once(setup("node 1 (new)", plans()), planner("node 1 (new)"));
  EXPECT_EQ(r.origin, "planned here");
  EXPECT_EQ(r.summary, "planned by node 1 (new)");
  EXPECT_EQ(plan_once(setup("node 2 (new)", plans()), planner("node 2 (new)")).origin, "plan from node 1 (new)");
  EXPECT_THAT(read(lock()), StartsWith("node 1 (new)\n"));
}

TEST_F(PlanOnceTest, AFolderOthersMayWriteToIsNeverShared) {
  fs::permissions(plans(), fs::perms::group_write | fs::perms::group_exec | fs::perms::group_read,
                  fs::perm_options::add);
  for (const char* node : {"node 0", "node 1"}) {
    const ChildReport r = plan_once(setup(node, plans()), planner(node));
    EXPECT_THAT(r.origin, StartsWith("planned here (others may write to the plan folder"));
  }
  EXPECT_EQ(calls().size(), 2U);
  EXPECT_FALSE(fs::exists(lock()));
}

TEST_F(PlanOnceTest, AMalformedMarkerIsNotTrusted) {
  std::ofstream(lock()) << "node 0 (a)\nanother-host\n1\n";
  std::ofstream(marker()) << "node 0 (a)\nnot a report";
  const ChildReport r = plan_once(setup("node 1 (b)", plans(), 30.0), planner("node 1 (b)"));
  EXPECT_EQ(r.origin, "planned here: node 0 (a) could not plan");
  EXPECT_EQ(r.summary, "planned by node 1 (b)");
}

TEST_F(PlanOnceTest, AFolderThatCannotBeOpenedIsLeftToThePlanner) {
  const ChildReport r = plan_once(setup("node 0", dir_ / "missing"), planner("node 0"));
  EXPECT_EQ(r.origin, "planned here");
}

StepRequest request() {
  StepRequest r;
  r.off = false;
  r.mode = "auto";
  r.model = "resnet50";
  r.batch = 384;
  return r;
}

NodeTopology node(const std::string& gpu_model) {
  NodeTopology n;
  n.origin = "hwloc XML /a/b.xml";
  for (int i = 0; i < 2; ++i) {
    GpuInfo g;
    g.model = gpu_model;
    g.memory_bytes = 80e9;
    n.gpus.push_back(g);
  }
  n.links.resize(4);
  n.links[1].gbytes = 150.0;
  n.links[2].gbytes = 150.0;
  return n;
}

TEST(SpankPlanInputsKey, SameInputsSameKeyAnyInputChangesIt) {
  const std::string key = plan_inputs_key(request(), node("H100"), 3, "config");
  EXPECT_EQ(key.size(), 16U);
  NodeTopology elsewhere = node("H100");
  elsewhere.origin = "hwloc XML /c/d.xml";  // where the node was read from does not matter
  elsewhere.notes = {"a note"};
  EXPECT_EQ(plan_inputs_key(request(), elsewhere, 3, "config"), key);
  EXPECT_NE(plan_inputs_key(request(), node("A100"), 3, "config"), key);
  EXPECT_NE(plan_inputs_key(request(), node("H100"), 2, "config"), key);
  EXPECT_NE(plan_inputs_key(request(), node("H100"), 3, "config2"), key);
  StepRequest other = request();
  other.batch = 192;
  EXPECT_NE(plan_inputs_key(other, node("H100"), 3, "config"), key);
  other = request();
  other.mode = "data";
  EXPECT_NE(plan_inputs_key(other, node("H100"), 3, "config"), key);
  NodeTopology slower = node("H100");
  slower.links[1].gbytes = 100.0;
  EXPECT_NE(plan_inputs_key(request(), slower, 3, "config"), key);
}

}  // namespace
}  // namespace layerplan::spank
