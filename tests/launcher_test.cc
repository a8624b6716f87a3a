// `layerplan launch` as a user runs it, with layerplan_test_worker as the ranks: every
// rank gets its number, the world size, a shared fresh rendezvous directory that is gone
// afterwards, its own CPUs and a matching OMP_NUM_THREADS; its lines come out prefixed;
// when a rank fails, all stop within 10 s and the launcher names that rank and exits
// non-zero; Ctrl-C stops them all; bad flags give one line and exit 2.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/cpu_shares.h"
#include "launcher/line_prefixer.h"
#include "tests/scratch_dir.h"

namespace layerplan {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using Clock = std::chrono::steady_clock;

const std::string kBinary = std::string(LAYERPLAN_BINARY_DIR) + "/layerplan";
const std::string kWorker = LAYERPLAN_TEST_WORKER;

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> result;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) result.push_back(line);
  return result;
}

// A started `layerplan ARGS...` whose stdout and stderr go to files.
class Launch {
 public:
  Launch(const std::vector<std::string>& args, const std::map<std::string, std::string>& env = {}) {
    static std::atomic<int> counter{0};
    dir_ = fs::temp_directory_path() /
           ("layerplan_launcher_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::create_directories(dir_);
    start_ = Clock::now();
    pid_ = ::fork();
    if (pid_ == 0) {
      const int out = ::open((dir_ / "stdout").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const int err = ::open((dir_ / "stderr").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const int in = ::open("/dev/null", O_RDONLY);
      ::dup2(in, 0);
      ::dup2(out, 1);
      ::dup2(err, 2);
      for (const auto& [key, value] : env) ::setenv(key.c_str(), value.c_str(), 1);
      std::vector<std::string> all = {kBinary};
      all.insert(all.end(), args.begin(), args.end());
      std::vector<char*> argv;
      for (std::string& a : all) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(kBinary.c_str(), argv.data());
      ::_exit(99);
    }
  }
  ~Launch() {
    if (pid_ > 0 && !done_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }

  void signal(int sig) { ::kill(pid_, sig); }
  pid_t pid() const { return pid_; }
  std::string out() const { return read_text(dir_ / "stdout"); }
  std::string err() const { return read_text(dir_ / "stderr"); }
  fs::path stdout_path() const { return dir_ / "stdout"; }

  // Waits until stdout contains `text`, at most `limit`.
  bool wait_for_output(const std::string& text, std::chrono::seconds limit = std::chrono::seconds(30)) const {
    const auto end = Clock::now() + limit;
    while (Clock::now() < end) {
      if (out().find(text) != std::string::npos) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }

  // Waits for the launcher to exit (at most `limit`, then kills it); returns its exit
  // code, or -1 when it did not exit by itself.
  int wait(std::chrono::seconds limit = std::chrono::seconds(60)) {
    const auto end = Clock::now() + limit;
    int status = 0;
    while (::waitpid(pid_, &status, WNOHANG) == 0) {
      if (Clock::now() > end) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
        done_ = true;
        return -1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    done_ = true;
    elapsed_ = Clock::now() - start_;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  double elapsed_s() const { return std::chrono::duration<double>(elapsed_).count(); }
  std::string describe() const { return "--- stdout ---\n" + out() + "--- stderr ---\n" + err(); }

 private:
  fs::path dir_;
  pid_t pid_ = -1;
  bool done_ = false;
  Clock::time_point start_;
  Clock::duration elapsed_{};
};

// The "env ..." lines the workers print with --print-env, by rank: key -> value.
std::map<int, std::map<std::string, std::string>> env_lines(const std::string& out) {
  std::map<int, std::map<std::string, std::string>> result;
  const std::regex line_re(R"(^\[rank (\d+)\] env (.*)$)");
  for (const std::string& line : lines_of(out)) {
    std::smatch m;
    if (!std::regex_match(line, m, line_re)) continue;
    std::istringstream fields(m[2].str());
    for (std::string field; fields >> field;) {
      const size_t eq = field.find('=');
      result[std::stoi(m[1].str())][field.substr(0, eq)] = field.substr(eq + 1);
    }
  }
  return result;
}

// The child of `parent` whose environment says LAYERPLAN_RANK=`rank`, or -1.
pid_t rank_pid(pid_t parent, int rank) {
  const std::string wanted = "LAYERPLAN_RANK=" + std::to_string(rank);
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    // /proc/PID/stat: "pid (comm) state ppid ..."; comm may hold spaces, so read after ')'.
    const std::string stat = read_text(entry.path() / "stat");
    const size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 1));
    std::string state;
    pid_t ppid = 0;
    rest >> state >> ppid;
    if (ppid != parent) continue;
    std::istringstream environ(read_text(entry.path() / "environ"));
    for (std::string var; std::getline(environ, var, '\0');) {
      if (var == wanted) return static_cast<pid_t>(std::stoi(name));
    }
  }
  return -1;
}

bool process_exists(const std::string& pid) { return ::kill(std::stoi(pid), 0) == 0 || errno != ESRCH; }

void expect_all_gone(const std::map<int, std::map<std::string, std::string>>& env) {
  for (const auto& [rank, fields] : env) {
    // A reaped child of the launcher no longer exists at all (not even as a zombie).
    EXPECT_FALSE(process_exists(fields.at("pid"))) << "rank " << rank << " (pid " << fields.at("pid") << ") survived";
  }
}

// The processes (not zombies) whose environment holds `tag`, which every descendant of a
// launch inherits however it detaches itself (background job, setsid, double fork).
std::vector<pid_t> tagged_processes(const std::string& tag) {
  std::vector<pid_t> found;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::istringstream environ(read_text(entry.path() / "environ"));
    for (std::string var; std::getline(environ, var, '\0');) {
      if (var == tag) found.push_back(static_cast<pid_t>(std::stoi(name)));
    }
  }
  return found;
}

// Polls until no process holds `tag` (true), or `limit` has passed (false).
bool all_tagged_gone(const std::string& tag, std::chrono::milliseconds limit) {
  const auto end = Clock::now() + limit;
  while (!tagged_processes(tag).empty()) {
    if (Clock::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

std::string unique_tag() {
  static std::atomic<int> counter{0};
  return "LAYERPLAN_TEST_TAG=" + std::to_string(::getpid()) + "_" + std::to_string(counter++);
}

std::map<std::string, std::string> env_of_tag(const std::string& tag) {
  const size_t eq = tag.find('=');
  return {{tag.substr(0, eq), tag.substr(eq + 1)}};
}

// A line of /proc/PID/status ("VmHWM:     1234 kB") as kB; -1 when it is not there.
long status_kb(pid_t pid, const std::string& key) {
  std::istringstream status(read_text("/proc/" + std::to_string(pid) + "/status"));
  for (std::string line; std::getline(status, line);) {
    if (line.rfind(key + ":", 0) == 0) return std::stol(line.substr(key.size() + 1));
  }
  return -1;
}

TEST(SplitCpus, ContiguousBlocksWithTheRemainderOnTheFirstRanks) {
  const auto shares = split_cpus({0, 1, 2, 3, 4, 5, 6}, 3);
  ASSERT_EQ(shares.size(), 3u);
  EXPECT_EQ(shares[0].cpus, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(shares[1].cpus, (std::vector<int>{3, 4}));
  EXPECT_EQ(shares[2].cpus, (std::vector<int>{5, 6}));
  EXPECT_EQ(shares[0].threads, 3);
  EXPECT_EQ(shares[2].threads, 2);
}

TEST(SplitCpus, MoreRanksThanCpusShareThemRoundRobinWithOneThreadEach) {
  const auto shares = split_cpus({4, 9}, 5);
  const std::vector<int> expected = {4, 9, 4, 9, 4};
  for (size_t k = 0; k < 5; ++k) {
    EXPECT_EQ(shares[k].cpus, std::vector<int>{expected[k]});
    EXPECT_EQ(shares[k].threads, 1);
  }
  EXPECT_THROW(split_cpus({}, 1), std::invalid_argument);
  EXPECT_THROW(split_cpus({0}, 0), std::invalid_argument);
}

TEST(LinePrefixer, PrefixesWholeLinesAcrossChunksAndKeepsTheLastOne) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  LinePrefixer lines("[rank 3] ", fds[1]);
  lines.feed("hel", 3);
  lines.feed("lo\nwor", 6);
  lines.feed("ld\n\n", 4);
  lines.feed("tail", 4);
  lines.finish();
  ::close(fds[1]);
  std::string text;
  char buf[256];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) text.append(buf, static_cast<size_t>(n));
  ::close(fds[0]);
  EXPECT_EQ(text, "[rank 3] hello\n[rank 3] world\n[rank 3] \n[rank 3] tail\n");
  EXPECT_EQ(lines.last_line(), "tail");
}

TEST(LinePrefixer, CutsALineLongerThanTheLimitIntoPrefixedPieces) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  LinePrefixer lines("[rank 0] ", fds[1], 4);
  lines.feed("abcdefghij", 10);
  lines.feed("k\nxy", 4);
  lines.finish();
  ::close(fds[1]);
  std::string text;
  char buf[256];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) text.append(buf, static_cast<size_t>(n));
  ::close(fds[0]);
  EXPECT_EQ(text, "[rank 0] abcd\n[rank 0] efgh\n[rank 0] ijk\n[rank 0] xy\n");
  EXPECT_EQ(lines.last_line(), "xy");
}

TEST(Launch, EveryRankGetsItsNumberTheWorldASharedStoreItsCpusAndPrefixedLines) {
  const int cpus = static_cast<int>(allowed_cpus().size());
  const int n = std::max(2, cpus);
  Launch run({"launch", "--nproc-per-node", std::to_string(n), "--", kWorker, "--print-env", "--steps", "2"});
  ASSERT_EQ(run.wait(), 0) << run.describe();
  const auto env = env_lines(run.out());
  ASSERT_EQ(env.size(), static_cast<size_t>(n)) << run.describe();
  std::set<std::string> stores, cpu_sets;
  for (const auto& [rank, fields] : env) {
    EXPECT_EQ(fields.at("rank"), std::to_string(rank));
    EXPECT_EQ(fields.at("local_rank"), std::to_string(rank));
    EXPECT_EQ(fields.at("world"), std::to_string(n));
    // torchrun's names, the same numbers.
    EXPECT_EQ(fields.at("torch_rank"), std::to_string(rank));
    EXPECT_EQ(fields.at("torch_local_rank"), std::to_string(rank));
    EXPECT_EQ(fields.at("torch_world"), std::to_string(n));
    EXPECT_EQ(fields.at("torch_local_world"), std::to_string(n));
    EXPECT_EQ(fields.at("backend"), "cpu");
    // OpenMP workers spin briefly when idle, leaving the cores to the communicator's thread.
    EXPECT_EQ(fields.at("spin"), "1000");
    // OMP_NUM_THREADS is the number of CPUs the rank is pinned to.
    const std::string list = fields.at("cpus");
    EXPECT_EQ(fields.at("omp"), std::to_string(std::count(list.begin(), list.end(), ',') + 1)) << list;
    stores.insert(fields.at("store"));
    cpu_sets.insert(list);
  }
  EXPECT_EQ(stores.size(), 1u) << "all ranks share one rendezvous directory";
  EXPECT_FALSE(fs::exists(*stores.begin())) << "the rendezvous directory is removed at the end";
  if (n == cpus) {
    EXPECT_EQ(cpu_sets.size(), static_cast<size_t>(n)) << "no two ranks share a CPU";
  }
  for (const std::string& line : lines_of(run.out())) EXPECT_THAT(line, StartsWith("[rank ")) << line;
  for (int r = 0; r < n; ++r) {
    EXPECT_THAT(run.out(), HasSubstr("[rank " + std::to_string(r) + "] done")) << run.describe();
  }
}

TEST(Launch, FourProcessesComputeCorrectlyAndSendExactlyTheDocumentedBytes) {
  // Each worker checks every result and, at the end, its counters per peer against the
  // ring, tree and point-to-point volumes; any difference makes it exit 1.
  Launch run({"launch", "--nproc", "4", "--", kWorker, "--count", "1001", "--steps", "2"});
  ASSERT_EQ(run.wait(), 0) << run.describe();
  for (int r = 0; r < 4; ++r) {
    EXPECT_THAT(run.out(), testing::ContainsRegex("\\[rank " + std::to_string(r) + "\\] bytes .* \\(as expected\\)"));
  }
}

TEST(Launch, ASpinCountTheUserSetIsKept) {
  Launch run({"launch", "--nproc", "2", "--", kWorker, "--print-env", "--no-comm", "--steps", "1"},
             {{"GOMP_SPINCOUNT", "77"}});
  ASSERT_EQ(run.wait(), 0) << run.describe();
  const auto env = env_lines(run.out());
  ASSERT_EQ(env.size(), 2u) << run.describe();
  for (const auto& [rank, fields] : env) EXPECT_EQ(fields.at("spin"), "77") << "rank " << rank;
}

TEST(Launch, MoreRanksThanCpusSayThatTheyShareAndRunOneThreadEach) {
  const int cpus = static_cast<int>(allowed_cpus().size());
  Launch run(
      {"launch", "--nproc", std::to_string(cpus + 1), "--", kWorker, "--print-env", "--no-comm", "--steps", "1"});
  ASSERT_EQ(run.wait(), 0) << run.describe();
  EXPECT_THAT(run.err(), HasSubstr("ranks share CPUs, 1 thread each"));
  for (const auto& [rank, fields] : env_lines(run.out())) EXPECT_EQ(fields.at("omp"), "1") << "rank " << rank;
}

TEST(Launch, ARankThatExitsNonZeroStopsAllAndIsNamedWithItsStatusAndMessage) {
  Launch run({"launch", "--nproc", "3", "--", kWorker, "--print-env", "--steps", "50", "--sleep-ms", "100",
              "--fail-rank", "1", "--exit-at-step", "2", "--exit-code", "3"});
  EXPECT_EQ(run.wait(), 3) << run.describe();
  EXPECT_LT(run.elapsed_s(), 10.0);
  const std::vector<std::string> err = lines_of(run.err());
  ASSERT_FALSE(err.empty());
  EXPECT_THAT(err.back(), StartsWith("layerplan launch: rank 1 exited with status 3: test_worker: rank 1 exits with 3 "
                                     "at step 2 as told"));
  EXPECT_THAT(run.out(), Not(HasSubstr("done")));
  expect_all_gone(env_lines(run.out()));
}

TEST(Launch, ACrashStopsARankThatIgnoresSigtermWithinTenSeconds) {
  // Rank 0 aborts at step 1; rank 1 ignores SIGTERM and hangs, so only SIGKILL stops it.
  Launch run({"launch", "--nproc", "2", "--grace-period", "2", "--", kWorker, "--print-env", "--no-comm", "--steps",
              "100", "--sleep-ms", "100", "--ignore-sigterm", "--fail-rank", "0", "--abort-at-step", "3"});
  EXPECT_EQ(run.wait(), 128 + SIGABRT) << run.describe();
  EXPECT_LT(run.elapsed_s(), 10.0);
  EXPECT_THAT(run.err(), HasSubstr("layerplan launch: rank 0 was killed by signal 6"));
  expect_all_gone(env_lines(run.out()));
}

TEST(Launch, KillingOneRankOfATrainingRunStopsAllWithinTenSecondsAndNamesIt) {
  // `layerplan train` itself on 4 ranks with LeNet-5's plan for 4 devices, long enough
  // that it is mid-run when rank 2 gets SIGKILL.
  const fs::path plan = fs::temp_directory_path() / ("layerplan_kill_test_" + std::to_string(::getpid()) + ".json");
  Launch planning(
      {"plan", "--model", "lenet5", "--batch", "16", "--gpus", "4", "--gpus-per-node", "4", "--json", plan.string()});
  ASSERT_EQ(planning.wait(), 0) << planning.describe();
  Launch run({"launch", "--nproc", "4", "--", kBinary, "train", "--plan", plan.string(), "--data", "synthetic",
              "--steps", "100000", "--log-every", "1"});
  const bool started = run.wait_for_output("step 3/", std::chrono::seconds(60));
  const pid_t victim = rank_pid(run.pid(), 2);
  fs::remove(plan);
  ASSERT_TRUE(started) << run.describe();
  ASSERT_GT(victim, 0) << "no child of the launcher has LAYERPLAN_RANK=2";
  const auto killed_at = Clock::now();
  ::kill(victim, SIGKILL);
  EXPECT_EQ(run.wait(), 128 + SIGKILL) << run.describe();
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - killed_at).count(), 10.0);
  EXPECT_THAT(run.err(), HasSubstr("layerplan launch: rank 2 was killed by signal 9")) << run.describe();
  EXPECT_THAT(run.out(), Not(HasSubstr("done:")));
}

TEST(Launch, ARankThatHangsInACollectiveMakesItsPeersTimeOutAndAllStop) {
  Launch run({"launch", "--nproc", "3", "--grace-period", "1", "--", kWorker, "--print-env", "--steps", "5",
              "--fail-rank", "2", "--hang-at-step", "1", "--ignore-sigterm"},
             {{"LAYERPLAN_COMM_TIMEOUT_S", "3"}});
  EXPECT_EQ(run.wait(), 1) << run.describe();
  EXPECT_LT(run.elapsed_s(), 10.0);
  // A peer that timed out is reported with the operation that timed out (the worker's
  // barrier or all-reduce; the first names the group, the second the silent rank).
  EXPECT_THAT(run.err(), testing::ContainsRegex("layerplan launch: rank [01] exited with status 1: test_worker: "
                                                "rank [01]: (barrier of group \\[0,1,2\\]|all_reduce_sum .* rank 2).*"
                                                "Timed out"));
  expect_all_gone(env_lines(run.out()));
}

TEST(Launch, CtrlCIsForwardedAndStopsEveryRank) {
  Launch run(
      {"launch", "--nproc", "2", "--", kWorker, "--print-env", "--no-comm", "--steps", "1000", "--sleep-ms", "50"});
  ASSERT_TRUE(run.wait_for_output("[rank 1] step 1 ok")) << run.describe();
  run.signal(SIGINT);
  EXPECT_EQ(run.wait(), 128 + SIGINT) << run.describe();
  EXPECT_THAT(run.err(), HasSubstr("layerplan launch: interrupted"));
  expect_all_gone(env_lines(run.out()));
}

// SIGUSR1 (scancel --signal=USR1, #SBATCH --signal=USR1@120) is passed on to the ranks and
// stops nothing by itself; ranks that then exit 75 (layerplan train after its checkpoint)
// have not failed, and the launcher exits 75 too, so a batch script can requeue the job.
TEST(Launch, Sigusr1GoesToTheRanksAndTheirExit75IsTheLaunchers) {
  Launch run({"launch", "--nproc", "2", "--", "sh", "-c",
              "trap 'echo got USR1; exit 75' USR1; echo ready; while :; do sleep 0.05; done"});
  ASSERT_TRUE(run.wait_for_output("[rank 0] ready")) << run.describe();
  ASSERT_TRUE(run.wait_for_output("[rank 1] ready")) << run.describe();
  run.signal(SIGUSR1);
  EXPECT_EQ(run.wait(), 75) << run.describe();
  EXPECT_THAT(run.out(), HasSubstr("[rank 0] got USR1")) << run.describe();
  EXPECT_THAT(run.out(), HasSubstr("[rank 1] got USR1")) << run.describe();
  EXPECT_THAT(run.err(), HasSubstr("stopped to be resumed (status 75)")) << run.describe();
}

TEST(Launch, WhatAFailingRankStartedInTheBackgroundIsGoneWhenTheLauncherExits) {
  // Rank 0 leaves a background job in its process group and one in a session of its own
  // (setsid), then fails; rank 1 waits to be stopped.
  const std::string tag = unique_tag();
  Launch run({"launch", "--nproc", "2", "--", "/bin/sh", "-c",
              "sleep 1000 & setsid sleep 1000 & echo started; "
              "if [ $LAYERPLAN_RANK = 0 ]; then sleep 0.5; exit 3; fi; wait"},
             env_of_tag(tag));
  EXPECT_EQ(run.wait(), 3) << run.describe();
  EXPECT_THAT(run.out(), HasSubstr("[rank 0] started"));
  EXPECT_TRUE(all_tagged_gone(tag, std::chrono::seconds(2)))
      << tagged_processes(tag).size() << " process(es) of the launch survived it\n"
      << run.describe();
}

TEST(Launch, WhatRanksStartedInTheBackgroundIsGoneAfterTheyAllSucceed) {
  const std::string tag = unique_tag();
  Launch run({"launch", "--nproc", "2", "--", "/bin/sh", "-c", "sleep 1000 & setsid sleep 1000 & echo started"},
             env_of_tag(tag));
  EXPECT_EQ(run.wait(), 0) << run.describe();
  EXPECT_TRUE(all_tagged_gone(tag, std::chrono::seconds(2)))
      << tagged_processes(tag).size() << " process(es) of the launch survived it\n"
      << run.describe();
}

TEST(Launch, KillingTheLauncherWithSigkillTakesItsRanksAndTheirChildren) {
  const std::string tag = unique_tag();
  Launch run({"launch", "--nproc", "2", "--", "/bin/sh", "-c", "sleep 1000 & echo started; wait"}, env_of_tag(tag));
  ASSERT_TRUE(run.wait_for_output("[rank 0] started")) << run.describe();
  ASSERT_TRUE(run.wait_for_output("[rank 1] started")) << run.describe();
  // Two shells and two sleeps, besides the launcher.
  ASSERT_GE(tagged_processes(tag).size(), 5u) << run.describe();
  run.signal(SIGKILL);
  EXPECT_EQ(run.wait(), -1);
  EXPECT_TRUE(all_tagged_gone(tag, std::chrono::seconds(2)))
      << tagged_processes(tag).size() << " process(es) of the launch survived it\n"
      << run.describe();
}

// The rendezvous folders (layerplan-rendezvous-*) in `dir`.
std::vector<fs::path> rendezvous_folders(const fs::path& dir) {
  std::vector<fs::path> found;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().filename().string().rfind("layerplan-rendezvous-", 0) == 0) found.push_back(entry.path());
  }
  return found;
}

// The watchdog removes the folder once the launcher and the ranks are gone. The launch's
// TMPDIR is a folder of this test's own, so that other launches' folders are not counted.
TEST(Launch, KillingTheLauncherWithSigkillLeavesNoRendezvousFolder) {
  const ScratchDir tmp;
  Launch run({"launch", "--nproc", "2", "--", "/bin/sh", "-c",
              "echo key >\"$LAYERPLAN_STORE_DIR/key$LAYERPLAN_RANK\"; echo started; exec sleep 1000"},
             {{"TMPDIR", tmp.path().string()}});
  ASSERT_TRUE(run.wait_for_output("[rank 0] started")) << run.describe();
  ASSERT_TRUE(run.wait_for_output("[rank 1] started")) << run.describe();
  const std::vector<fs::path> folders = rendezvous_folders(tmp.path());
  ASSERT_EQ(folders.size(), 1u) << run.describe();
  ASSERT_TRUE(fs::exists(folders[0] / "key0") && fs::exists(folders[0] / "key1")) << run.describe();
  run.signal(SIGKILL);
  EXPECT_EQ(run.wait(), -1);
  const auto end = Clock::now() + std::chrono::seconds(5);
  while (!rendezvous_folders(tmp.path()).empty() && Clock::now() < end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(rendezvous_folders(tmp.path()).empty()) << "the rendezvous folder survived\n" << run.describe();
}

TEST(Launch, AHundredMegabytesWithoutANewlineComeOutInPrefixedPiecesAndTheLauncherStaysSmall) {
  constexpr long kBytes = 100'000'000;
  const fs::path go = fs::temp_directory_path() / ("layerplan_launcher_go_" + std::to_string(::getpid()));
  fs::remove(go);
  Launch run({"launch", "--nproc", "1", "--", "/bin/sh", "-c",
              "head -c " + std::to_string(kBytes) +
                  " /dev/zero | tr '\\0' x; "
                  "while [ ! -e " +
                  go.string() + " ]; do sleep 0.05; done"});
  // Until it has all come out, or the launcher has grown past the bound.
  constexpr long kBoundKb = 64 * 1024;
  const auto end = Clock::now() + std::chrono::seconds(60);
  long peak_kb = 0;
  while (Clock::now() < end) {
    peak_kb = std::max(peak_kb, status_kb(run.pid(), "VmHWM"));
    std::error_code ec;
    if (peak_kb > kBoundKb || fs::file_size(run.stdout_path(), ec) >= static_cast<uintmax_t>(kBytes)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  peak_kb = std::max(peak_kb, status_kb(run.pid(), "VmHWM"));
  std::ofstream(go.string()) << "go\n";
  EXPECT_EQ(run.wait(), 0) << run.err();
  fs::remove(go);
  EXPECT_GT(peak_kb, 0);
  EXPECT_LT(peak_kb, kBoundKb) << "the launcher's peak resident memory, kB";
  // The output: pieces of at most 64 KiB, each a line with the prefix, together all the bytes.
  std::ifstream out(run.stdout_path());
  long total = 0, pieces = 0;
  for (std::string line; std::getline(out, line); ++pieces) {
    ASSERT_THAT(line, StartsWith("[rank 0] ")) << "piece " << pieces;
    const std::string piece = line.substr(9);
    ASSERT_LE(piece.size(), 64u * 1024u) << "piece " << pieces;
    ASSERT_EQ(piece.find_first_not_of('x'), std::string::npos) << "piece " << pieces;
    total += static_cast<long>(piece.size());
  }
  EXPECT_EQ(total, kBytes);
  EXPECT_GE(pieces, kBytes / (64 * 1024));
}

TEST(Launch, TheCommandMayComeWithoutDashDashAndKeepsALaterDashDash) {
  Launch plain({"launch", "--nproc", "1", kWorker, "--no-comm", "--steps", "1"});
  EXPECT_EQ(plain.wait(), 0) << plain.describe();
  EXPECT_THAT(plain.out(), HasSubstr("[rank 0] done"));
  // The worker sees the `--` after its name, and rejects it as an unknown flag.
  Launch inner({"launch", "--nproc", "1", kWorker, "--", "--steps", "1"});
  EXPECT_EQ(inner.wait(), 2) << inner.describe();
  EXPECT_THAT(inner.err(), HasSubstr("test_worker: unknown flag '--'"));
}

TEST(Launch, BadInputGivesOneLineAndExitTwo) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"launch", "--nproc", "0", "--", kWorker}, "--nproc 0"},
      {{"launch", "--nproc", "two", "--", kWorker}, "--nproc"},
      {{"launch", "--nproc", "2"}, "expected the command to run after --"},
      {{"launch", "--nproc", "2", "--", "no-such-program-xyz"}, "'no-such-program-xyz'"},
      {{"launch", "--nproc", "2", "--", "/nonexistent/prog"}, "'/nonexistent/prog'"},
      {{"launch", "--backend", "tpu", "--", kWorker}, "--backend: 'tpu': expected cpu or gpu"},
      {{"launch", "--grace-period", "-1", "--", kWorker}, "--grace-period"},
      {{"launch", "--nproc", "1", "--bogus", kWorker}, "unknown flag '--bogus'"},
  };
  for (const auto& [args, expected] : cases) {
    Launch run(args);
    EXPECT_EQ(run.wait(), 2) << expected << "\n" << run.describe();
    const auto err = lines_of(run.err());
    ASSERT_EQ(err.size(), 1u) << run.describe();
    EXPECT_THAT(err[0], StartsWith("layerplan: "));
    EXPECT_THAT(err[0], HasSubstr(expected));
    EXPECT_EQ(run.out(), "");
  }
}

}  // namespace
}  // namespace layerplan
