// A stand-in slurmstepd: dlopens the plugin and calls its remote callbacks as Slurm 22.05
// does (init and init_post_opt as root, user_init with only the effective ids dropped to
// the job's user, task_init), with Slurm's API provided by this executable. Each step
// runs in a forked stand-in, so a plugin that crashes or hangs slurmstepd shows as a
// stand-in killed by a signal or by the test's own deadline. Checks that nothing a user
// submits crashes, hangs or bloats slurmstepd, and what reaches its log, the job's output
// and the environment (docs/slurm-plugin.md, "The planning process").
#include <dlfcn.h>
#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "scratch_dir.h"

extern "C" {
#include <slurm/spank.h>
}

namespace {

// ---- what the stand-in knows of its step, and what the plugin did ---------------------------
struct Step {
  std::map<std::string, std::string> env;  // the step's environment (spank_getenv)
  std::vector<std::string> options;        // "NAME=VALUE" as the option callbacks get them
  std::vector<std::string> plugstack;      // plugstack.conf arguments
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;
  uint32_t job_id = 77, step_id = 0, node_id = 0, nnodes = 1;
  std::string workdir;
  // The running Slurm's release (S_SLURM_VERSION_MAJOR/MINOR): the headers' by default.
  std::string slurm_major = std::to_string(SLURM_VERSION_MAJOR(SLURM_VERSION_NUMBER));
  std::string slurm_minor = std::to_string(SLURM_VERSION_MINOR(SLURM_VERSION_NUMBER));
};

Step* g_step = nullptr;
std::vector<spank_option> g_options;
std::map<std::string, std::string> g_exported;  // spank_setenv
std::string g_record;                           // what the stand-in reports back, framed

void note(char kind, const std::string& text) {
  g_record += kind;
  g_record += std::to_string(text.size()) + ":" + text;
}

std::string vformat(const char* fmt, va_list ap) {
  char buf[65536];
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  return buf;
}

}  // namespace

// ---- Slurm's side of the API, as slurmstepd provides it --------------------------------------
extern "C" {
__attribute__((visibility("default"))) spank_context_t spank_context(void) { return S_CTX_REMOTE; }
__attribute__((visibility("default"))) const char* spank_strerror(spank_err_t) { return "stand-in error"; }
__attribute__((visibility("default"))) spank_err_t spank_option_register(spank_t, struct spank_option* opt) {
  g_options.push_back(*opt);
  return static_cast<spank_err_t>(ESPANK_SUCCESS);
}
__attribute__((visibility("default"))) spank_err_t spank_getenv(spank_t, const char* var, char* buf, int len) {
  const auto it = g_step->env.find(var);
  if (it == g_step->env.end()) return static_cast<spank_err_t>(ESPANK_ENV_NOEXIST);
  std::snprintf(buf, static_cast<size_t>(len), "%s", it->second.c_str());
  return static_cast<spank_err_t>(ESPANK_SUCCESS);
}
__attribute__((visibility("default"))) spank_err_t spank_setenv(spank_t, const char* var, const char* val, int) {
  g_exported[var] = val;
  note('V', std::string(var) + "=" + val);
  return static_cast<spank_err_t>(ESPANK_SUCCESS);
}
__attribute__((visibility("default"))) spank_err_t spank_get_item(spank_t, spank_item_t item, ...) {
  va_list ap;
  va_start(ap, item);
  auto rc = static_cast<spank_err_t>(ESPANK_SUCCESS);
  switch (item) {
    case S_JOB_ID:
      *va_arg(ap, uint32_t*) = g_step->job_id;
      break;
    case S_JOB_STEPID:
      *va_arg(ap, uint32_t*) = g_step->step_id;
      break;
    case S_JOB_NODEID:
      *va_arg(ap, uint32_t*) = g_step->node_id;
      break;
    case S_JOB_NNODES:
      *va_arg(ap, uint32_t*) = g_step->nnodes;
      break;
    case S_JOB_UID:
      *va_arg(ap, uid_t*) = g_step->uid;
      break;
    case S_JOB_GID:
      *va_arg(ap, gid_t*) = g_step->gid;
      break;
    case S_SLURM_VERSION_MAJOR:
      *va_arg(ap, char**) = g_step->slurm_major.data();
      break;
    case S_SLURM_VERSION_MINOR:
      *va_arg(ap, char**) = g_step->slurm_minor.data();
      break;
    case S_JOB_SUPPLEMENTARY_GIDS:
      *va_arg(ap, gid_t**) = g_step->groups.data();
      *va_arg(ap, int*) = static_cast<int>(g_step->groups.size());
      break;
    default:
      rc = static_cast<spank_err_t>(ESPANK_NOT_AVAIL);
  }
  va_end(ap);
  return rc;
}
// slurm_info: slurmd's log only. slurm_error: the job's output (and the log). slurm_spank_log: the job's output.
__attribute__((visibility("default"))) void slurm_info(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  note('L', vformat(fmt, ap));
  va_end(ap);
}
__attribute__((visibility("default"))) void slurm_verbose(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  note('L', vformat(fmt, ap));
  va_end(ap);
}
__attribute__((visibility("default"))) void slurm_error(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  const std::string text = vformat(fmt, ap);
  va_end(ap);
  note('O', "error: " + text);
  note('L', "error: " + text);
}
__attribute__((visibility("default"))) void slurm_spank_log(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  note('O', vformat(fmt, ap));
  va_end(ap);
}
}

namespace layerplan {
namespace {

namespace fs = std::filesystem;

const std::string kH100Xml =
    std::string(LAYERPLAN_SOURCE_DIR) + "/tests/data/topologies/flux-dell-xe8640-4xh100-nvlink-4xndr.xml";
const std::string kP4dXml =
    std::string(LAYERPLAN_SOURCE_DIR) + "/tests/data/topologies/aws-ofi-nccl-p4d-24xlarge-8xa100-nvswitch-4xefa.xml";

// What a step did, as the stand-in saw it.
struct StepResult {
  int stand_in_status = 0;  // waitpid status of the stand-in slurmstepd
  bool stand_in_timed_out = false;
  std::map<std::string, std::string> env;
  std::vector<std::string> output;  // the job's output
  std::vector<std::string> log;     // slurmd's log
  int task_init_rc = 0;
  bool stand_in_ok() const {
    return !stand_in_timed_out && WIFEXITED(stand_in_status) && WEXITSTATUS(stand_in_status) == 0;
  }
  std::string all_output() const {
    std::string all;
    for (const std::string& line : output) all += line + "\n";
    return all;
  }
  std::string all_log() const {
    std::string all;
    for (const std::string& line : log) all += line + "\n";
    return all;
  }
};

using Callback = int (*)(spank_t, int, char**);

// The stand-in's body, in its own process: Slurm's call sequence for one step on one node.
[[noreturn]] void stand_in(const std::string& plugin, Step& step, int out_fd) {
  g_step = &step;
  void* so = ::dlopen(plugin.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (so == nullptr) {
    note('O', std::string("dlopen: ") + ::dlerror());
    ::_exit(3);
  }
  auto cb = [&](const char* name) { return reinterpret_cast<Callback>(::dlsym(so, name)); };
  std::vector<char*> argv;
  for (std::string& a : step.plugstack) argv.push_back(a.data());
  spank_t sp = nullptr;
  cb("slurm_spank_init")(sp, static_cast<int>(argv.size()), argv.data());
  for (const std::string& o : step.options) {
    const size_t eq = o.find('=');
    const std::string name = o.substr(0, eq);
    for (const spank_option& opt : g_options) {
      if (name == opt.name) opt.cb(opt.val, eq == std::string::npos ? nullptr : o.substr(eq + 1).c_str(), 1);
    }
  }
  cb("slurm_spank_init_post_opt")(sp, static_cast<int>(argv.size()), argv.data());
  // Slurm drops the effective ids only (initgroups, setegid, seteuid), then changes directory.
  if (::getuid() == 0) {
    if (::setgroups(step.groups.size(), step.groups.data()) != 0 || ::setegid(step.gid) != 0 ||
        ::seteuid(step.uid) != 0) {
      ::_exit(4);
    }
  }
  if (::chdir(step.workdir.c_str()) != 0) ::_exit(5);
  cb("slurm_spank_user_init")(sp, 0, nullptr);
  if (::getuid() == 0 && (::seteuid(0) != 0 || ::setegid(0) != 0)) ::_exit(6);
  const int rc = cb("slurm_spank_task_init")(sp, 0, nullptr);
  note('R', std::to_string(rc));
  const char* p = g_record.data();
  size_t left = g_record.size();
  while (left > 0) {
    const ssize_t n = ::write(out_fd, p, left);
    if (n <= 0) ::_exit(7);
    p += n;
    left -= static_cast<size_t>(n);
  }
  ::_exit(0);
}

StepResult parse(const std::string& record) {
  StepResult r;
  size_t pos = 0;
  while (pos < record.size()) {
    const char kind = record[pos++];
    const size_t colon = record.find(':', pos);
    const size_t n = std::stoul(record.substr(pos, colon - pos));
    const std::string text = record.substr(colon + 1, n);
    pos = colon + 1 + n;
    if (kind == 'V') r.env[text.substr(0, text.find('='))] = text.substr(text.find('=') + 1);
    if (kind == 'O') r.output.push_back(text);
    if (kind == 'L') r.log.push_back(text);
    if (kind == 'R') r.task_init_rc = std::stoi(text);
  }
  return r;
}

// Runs one step in a forked stand-in; gives it `limit_s` before calling it hung.
StepResult run_step(Step step, const std::string& plugin, int limit_s = 120) {
  int fds[2];
  EXPECT_EQ(::pipe(fds), 0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    ::alarm(static_cast<unsigned>(limit_s));  // a hung stand-in dies of SIGALRM
    stand_in(plugin, step, fds[1]);
  }
  ::close(fds[1]);
  std::string record;
  char buf[65536];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) record.append(buf, static_cast<size_t>(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  StepResult r = record.empty() ? StepResult{} : parse(record);
  r.stand_in_status = status;
  r.stand_in_timed_out = WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM;
  return r;
}

// Runs `steps` at once, one stand-in each, as the slurmstepds of one step's nodes.
std::vector<StepResult> run_steps_at_once(std::vector<Step> steps, const std::string& plugin, int limit_s = 120) {
  std::vector<std::pair<pid_t, int>> running;
  for (Step& step : steps) {
    int fds[2];
    EXPECT_EQ(::pipe(fds), 0);
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::close(fds[0]);
      ::alarm(static_cast<unsigned>(limit_s));
      stand_in(plugin, step, fds[1]);
    }
    ::close(fds[1]);
    running.emplace_back(pid, fds[0]);
  }
  std::vector<StepResult> results;
  for (const auto& [pid, fd] : running) {
    std::string record;
    char buf[65536];
    for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) record.append(buf, static_cast<size_t>(n));
    ::close(fd);
    int status = 0;
    ::waitpid(pid, &status, 0);
    StepResult r = record.empty() ? StepResult{} : parse(record);
    r.stand_in_status = status;
    r.stand_in_timed_out = WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM;
    results.push_back(std::move(r));
  }
  return results;
}

// $LAYERPLAN_STEPD_PLUGIN runs the same checks against another build of the plugin.
const std::string kPlugin = std::getenv("LAYERPLAN_STEPD_PLUGIN") != nullptr
                                ? std::getenv("LAYERPLAN_STEPD_PLUGIN")
                                : std::string(LAYERPLAN_BINARY_DIR) + "/spank_plugin/spank_layerplan.so";
const std::string kTestingPlugin = std::string(LAYERPLAN_BINARY_DIR) + "/spank_plugin/spank_layerplan_testing.so";

// The job's user: lpuser or nobody when the test runs as root (as Slurm's tests do), else
// the test's own user (then no ids change).
struct JobUser {
  uid_t uid;
  gid_t gid;
};
JobUser job_user() {
  if (::getuid() != 0) return {::getuid(), ::getgid()};
  for (const char* name : {"lpuser", "nobody"}) {
    if (const passwd* pw = ::getpwnam(name)) return {pw->pw_uid, pw->pw_gid};
  }
  return {65534, 65534};
}

class StepdTest : public ::testing::Test {
 protected:
  void SetUp() override {
    user_ = job_user();
    work_ = scratch_.path() / "work";
    fs::create_directories(work_);
    ASSERT_EQ(::chown(scratch_.path().c_str(), 0, 0) == 0 || ::getuid() != 0, true);
    ::chmod(scratch_.path().c_str(), 0755);
    ASSERT_EQ(::chown(work_.c_str(), user_.uid, user_.gid) == 0 || ::getuid() != 0, true);
    ::chmod(work_.c_str(), 0755);
  }

  Step step(const std::vector<std::string>& options, const std::vector<std::string>& plugstack = {}) const {
    Step s;
    s.uid = user_.uid;
    s.gid = user_.gid;
    s.groups = {user_.gid};
    s.workdir = work_.string();
    s.env = {{"SLURM_STEP_GPUS", "0,1,2,3"}, {"SLURM_JOB_NUM_NODES", "1"}};
    s.options = options;
    s.plugstack = {"topology_xml=" + kH100Xml};
    for (const std::string& p : plugstack) s.plugstack.push_back(p);
    return s;
  }

  // A file the job's user owns, in the working directory.
  std::string user_file(const std::string& name, const std::string& text) const {
    const fs::path p = work_ / name;
    std::ofstream(p) << text;
    EXPECT_TRUE(::chown(p.c_str(), user_.uid, user_.gid) == 0 || ::getuid() != 0);
    return p.string();
  }

  ScratchDir scratch_;
  fs::path work_;
  JobUser user_{};
};

bool has_raw_control(const std::string& text, bool allow_newline) {
  for (unsigned char c : text) {
    if ((c < 0x20 && !(allow_newline && c == '\n')) || c == 0x7f) return true;
  }
  return false;
}

// The step failed the way a user can see and an admin can find: task_init failed with one
// line naming `reason`, slurmd's log has it too, and the stand-in itself is fine.
void expect_failed_step(const StepResult& r, const std::string& reason) {
  ASSERT_TRUE(r.stand_in_ok()) << "the stand-in slurmstepd did not survive: status " << r.stand_in_status
                               << (r.stand_in_timed_out ? " (hung)" : "");
  EXPECT_EQ(r.task_init_rc, -1);
  EXPECT_TRUE(r.env.empty());
  ASSERT_EQ(r.output.size(), 1u) << r.all_output();
  EXPECT_NE(r.output[0].find(reason), std::string::npos) << r.output[0];
  EXPECT_EQ(r.output[0].find('\n'), std::string::npos);
  EXPECT_NE(r.all_log().find(reason), std::string::npos) << r.all_log();
}

TEST_F(StepdTest, AGoodStepGetsItsPlanInAPrivateFileAndTheEnvironment) {
  const StepResult r = run_step(step({"layerplan=auto", "layerplan-model=alexnet"}), kPlugin);
  ASSERT_TRUE(r.stand_in_ok());
  EXPECT_EQ(r.task_init_rc, 0) << r.all_output();
  ASSERT_EQ(r.env.count("LAYERPLAN_PLAN"), 1u);
  struct stat st {};
  ASSERT_EQ(::stat(r.env.at("LAYERPLAN_PLAN").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, user_.uid);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_NE(r.all_log().find("topology"), std::string::npos);
}

// Loaded by another Slurm release (an upgrade before the package's): one error naming both
// releases, then nothing for the job, even for a step that asks for a plan, and never a
// failed step.
TEST_F(StepdTest, AnotherSlurmReleaseLogsOneErrorAndLeavesTheJobAlone) {
  Step s = step({"layerplan=auto", "layerplan-model=alexnet", "layerplan-explain"});
  s.slurm_major = "23";
  s.slurm_minor = "02";
  const StepResult r = run_step(s, kPlugin);
  ASSERT_TRUE(r.stand_in_ok());
  EXPECT_EQ(r.task_init_rc, 0);
  EXPECT_TRUE(r.env.empty());
  ASSERT_EQ(r.output.size(), 1u) << r.all_output();
  const std::string built = std::to_string(SLURM_VERSION_MAJOR(SLURM_VERSION_NUMBER)) + ".";
  EXPECT_NE(r.output[0].find("built for Slurm " + built), std::string::npos) << r.output[0];
  EXPECT_NE(r.output[0].find("runs in Slurm 23.02"), std::string::npos) << r.output[0];
  ASSERT_EQ(r.log.size(), 1u) << r.all_log();
  EXPECT_EQ(r.log[0], r.output[0]);
}

// A bug or a hostile input that crashes the planner (the audit's was a value nested 200k
// arrays deep) kills the planning process, not slurmstepd.
TEST_F(StepdTest, ACrashingPlannerFailsTheStepNotSlurmstepd) {
  ::setenv("LAYERPLAN_TEST_PLANNING", "segv", 1);
  const StepResult r = run_step(step({"layerplan=auto", "layerplan-model=alexnet"}), kTestingPlugin);
  ::unsetenv("LAYERPLAN_TEST_PLANNING");
  expect_failed_step(r, "the planning process crashed (signal 11");
}

TEST_F(StepdTest, AModelFileNestedTooDeepNeverCrashesSlurmstepd) {
  const std::string deep = std::string(200000, '[') + std::string(200000, ']');
  const std::string model =
      user_file("deep.json", R"({"format": "layerplan-model", "version": 1, "name": )" + deep + "}");
  const StepResult r = run_step(step({"layerplan=auto", "layerplan-model=" + model}), kPlugin);
  ASSERT_TRUE(r.stand_in_ok()) << "status " << r.stand_in_status;
  EXPECT_EQ(r.task_init_rc, -1);
  ASSERT_EQ(r.output.size(), 1u) << r.all_output();
}

// An ONNX model plans through the plugin itself (libonnx loaded into slurmstepd), and a
// file libonnx's checker refuses (its exception crosses from libonnx into the plugin,
// whose C++ runtime is its own) fails the step with that one line.
std::string onnx_test_file(const std::string& name) {
  std::ifstream in(std::string(LAYERPLAN_SOURCE_DIR) + "/tests/onnx_data/" + name, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

TEST_F(StepdTest, AnOnnxModelPlansAndABadOneFailsTheStep) {
  const std::string good = user_file("tiny.onnx", onnx_test_file("tiny.onnx"));
  const StepResult r = run_step(step({"layerplan=auto", "layerplan-model=" + good, "layerplan-batch=16"}), kPlugin);
  ASSERT_TRUE(r.stand_in_ok());
  EXPECT_EQ(r.task_init_rc, 0) << r.all_output();
  ASSERT_EQ(r.env.count("LAYERPLAN_PLAN"), 1u);
  const std::string bad = user_file("bad.onnx", onnx_test_file("bad_checker.onnx"));
  expect_failed_step(run_step(step({"layerplan=auto", "layerplan-model=" + bad}), kPlugin),
                     "not a valid ONNX model: Node (/conv/Conv) has input size 1");
}

// A search far too big for its budget (ResNet-50 on 128 x 8 GPUs: the cost tables alone
// overshoot a 0.1 s budget by seconds, and take GBs) held slurmstepd for as long as it took;
// here the child is killed at the budget plus the admin's margin, whatever it does.
TEST_F(StepdTest, APlannerThatHangsIsKilledAtTheDeadline) {
  ::setenv("LAYERPLAN_TEST_PLANNING", "sleep", 1);
  const StepResult r =
      run_step(step({"layerplan=auto", "layerplan-model=alexnet"}, {"time_budget_s=0.5", "planning_margin_s=2"}),
               kTestingPlugin, 60);
  ::unsetenv("LAYERPLAN_TEST_PLANNING");
  expect_failed_step(r, "the planning process did not finish within 2.5 s and was killed");
}

TEST_F(StepdTest, AHugeSearchWithATinyBudgetNeverHoldsSlurmstepdPastTheDeadline) {
  Step s = step({"layerplan=auto", "layerplan-model=resnet50"}, {"time_budget_s=0.1", "planning_margin_s=2"});
  s.plugstack[0] = "topology_xml=" + kP4dXml;
  s.env = {{"SLURM_STEP_GPUS", "0-7"}, {"SLURM_JOB_NUM_NODES", "128"}};
  s.nnodes = 128;
  const StepResult r = run_step(s, kPlugin, 40);
  ASSERT_TRUE(r.stand_in_ok()) << "status " << r.stand_in_status << (r.stand_in_timed_out ? " (hung)" : "");
  // The planner notices its budget within its loops and falls back to data parallelism; only
  // on a machine too busy to run it for 0.1 s does the planning process's limit stop it first:
  // the CPU time or the wall clock, whichever comes first. The wall clock: budget and margin,
  // and the time a node of a 128-node step may wait for another's plan (0.1 s + 1 s).
  if (r.task_init_rc == 0) {
    ASSERT_EQ(r.output.size(), 2u) << r.all_output();
    EXPECT_EQ(r.output[0], "layerplan: job 77.0 node 0: planned here");
    EXPECT_NE(r.output[1].find("did not finish within the time budget of 0.1 s; using data parallelism"),
              std::string::npos)
        << r.output[1];
  } else {
    ASSERT_EQ(r.output.size(), 1u) << r.all_output();
    EXPECT_EQ(r.task_init_rc, -1);
    EXPECT_TRUE(r.output[0].find("did not finish within 3.2 s") != std::string::npos ||
                r.output[0].find("used up its CPU-time limit of 1.6 s") != std::string::npos)
        << r.output[0];
  }
}

TEST_F(StepdTest, APlannerThatSpinsHitsItsCpuLimit) {
  ::setenv("LAYERPLAN_TEST_PLANNING", "spin", 1);
  const StepResult r =
      run_step(step({"layerplan=auto", "layerplan-model=alexnet"}, {"time_budget_s=0.5", "planning_margin_s=2"}),
               kTestingPlugin, 60);
  ::unsetenv("LAYERPLAN_TEST_PLANNING");
  // At 2 s of CPU time, or at 2.5 s of wall clock when the machine is too busy to give it that.
  expect_failed_step(r, "the planning process ");
  EXPECT_TRUE(r.output[0].find("used up its CPU-time limit of 2 s") != std::string::npos ||
              r.output[0].find("did not finish within 2.5 s") != std::string::npos)
      << r.output[0];
}

TEST_F(StepdTest, APlannerThatEatsMemoryHitsItsAddressSpaceLimit) {
  ::setenv("LAYERPLAN_TEST_PLANNING", "alloc", 1);
  const StepResult r =
      run_step(step({"layerplan=auto", "layerplan-model=alexnet"}, {"planning_memory_mb=512"}), kTestingPlugin);
  ::unsetenv("LAYERPLAN_TEST_PLANNING");
  expect_failed_step(r, "out of memory: the planning process may map 512 MiB beyond slurmstepd's");
}

TEST_F(StepdTest, GarbageOrTooMuchFromThePlannerIsRefused) {
  ::setenv("LAYERPLAN_TEST_PLANNING", "garbage", 1);
  StepResult r = run_step(step({"layerplan=auto", "layerplan-model=alexnet"}), kTestingPlugin);
  expect_failed_step(r, "the planning process sent a malformed report");
  ::setenv("LAYERPLAN_TEST_PLANNING", "flood", 1);
  r = run_step(step({"layerplan=auto", "layerplan-model=alexnet"}), kTestingPlugin);
  ::unsetenv("LAYERPLAN_TEST_PLANNING");
  expect_failed_step(r, "sent more than 1048576 bytes and was killed");
}

// A model named with a newline and an escape sequence: Slurm's log, the job's output and
// the environment get it escaped, never raw.
TEST_F(StepdTest, ControlCharactersInAModelNameNeverReachTheLogOutputOrEnvironment) {
  const std::string text = R"({"format": "layerplan-model", "version": 1,
    "name": "tiny\nslurmstepd: forged line\u001b[2J",
    "input": {"channels": 3, "height": 32, "width": 32},
    "layers": [
      {"name": "conv1\u001b[31m", "kind": "conv2d", "out_channels": 16, "kernel": 3, "padding": 1},
      {"name": "relu1", "kind": "relu"},
      {"name": "flat", "kind": "flatten"},
      {"name": "fc", "kind": "fully_connected", "out_features": 10},
      {"name": "loss", "kind": "softmax_cross_entropy"}
    ]})";
  const std::string model = user_file("evil.json", text);
  const StepResult r = run_step(
      step({"layerplan=auto", "layerplan-model=" + model, "layerplan-explain", "layerplan-batch=32"}), kPlugin);
  ASSERT_TRUE(r.stand_in_ok());
  EXPECT_EQ(r.task_init_rc, 0) << r.all_output();
  for (const std::string& line : r.output) EXPECT_FALSE(has_raw_control(line, false)) << line;
  for (const std::string& line : r.log) EXPECT_FALSE(has_raw_control(line, false)) << line;
  for (const auto& [name, value] : r.env) EXPECT_FALSE(has_raw_control(value, false)) << name;
  EXPECT_NE(r.all_log().find("tiny\\nslurmstepd: forged line\\x1b[2J"), std::string::npos) << r.all_log();
}

TEST_F(StepdTest, AnErrorAboutAControlCharacterNameIsPrintedEscaped) {
  const StepResult r = run_step(step({"layerplan=auto", "layerplan-model=no\nsuch\x1b[31m.json"}), kPlugin);
  ASSERT_TRUE(r.stand_in_ok());
  EXPECT_EQ(r.task_init_rc, -1);
  ASSERT_EQ(r.output.size(), 1u) << r.all_output();
  EXPECT_FALSE(has_raw_control(r.output[0], false)) << r.output[0];
  EXPECT_NE(r.output[0].find("no\\nsuch\\x1b[31m.json"), std::string::npos) << r.output[0];
}

// Another user creates the plan file's name first in a folder everyone may write to (the
// sticky /tmp): the step still gets its own file, with a name nobody could guess.
TEST_F(StepdTest, APreCreatedPlanFileDoesNotFailTheStep) {
  ::chmod(work_.c_str(), 01777);
  ASSERT_EQ(::chown(work_.c_str(), 0, 0) == 0 || ::getuid() != 0, true);
  std::ofstream(work_ / "layerplan-77.0.json") << "planted\n";
  const StepResult r = run_step(step({"layerplan=auto", "layerplan-model=alexnet"}), kPlugin);
  ASSERT_TRUE(r.stand_in_ok());
  EXPECT_EQ(r.task_init_rc, 0) << r.all_output();
  const std::string plan = r.env.count("LAYERPLAN_PLAN") ? r.env.at("LAYERPLAN_PLAN") : "";
  EXPECT_NE(plan, (work_ / "layerplan-77.0.json").string());
  EXPECT_EQ(plan.rfind((work_ / "layerplan-77.0.").string(), 0), 0u) << plan;
  struct stat st {};
  ASSERT_EQ(::stat(plan.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, user_.uid);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

// plan_dir: each user gets PLAN_DIR/USER, 0700, theirs; one that is someone else's or a
// symlink is refused, and nothing is written.
TEST_F(StepdTest, PlanDirGetsAPrivateFolderPerUser) {
  const fs::path plans = scratch_.path() / "plans";
  fs::create_directories(plans);
  const StepResult r =
      run_step(step({"layerplan=auto", "layerplan-model=alexnet"}, {"plan_dir=" + plans.string()}), kPlugin);
  ASSERT_TRUE(r.stand_in_ok());
  EXPECT_EQ(r.task_init_rc, 0) << r.all_output();
  const std::string plan = r.env.count("LAYERPLAN_PLAN") ? r.env.at("LAYERPLAN_PLAN") : "";
  const fs::path folder = fs::path(plan).parent_path();
  EXPECT_EQ(folder.parent_path(), plans);
  struct stat st {};
  ASSERT_EQ(::stat(folder.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, user_.uid);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
}

TEST_F(StepdTest, AForeignOwnedOrSymlinkedUserFolderIsRefused) {
  if (::getuid() != 0) GTEST_FAIL() << "needs root to create another user's folder";
  const fs::path plans = scratch_.path() / "plans";
  fs::create_directories(plans);
  const std::string name = ::getpwuid(user_.uid) ? ::getpwuid(user_.uid)->pw_name : std::to_string(user_.uid);
  fs::create_directories(plans / name);  // root's, not the user's
  StepResult r = run_step(step({"layerplan=auto", "layerplan-model=alexnet"}, {"plan_dir=" + plans.string()}), kPlugin);
  expect_failed_step(r, "belongs to uid 0");
  EXPECT_TRUE(fs::is_empty(plans / name));
  fs::remove(plans / name);
  fs::create_directories(scratch_.path() / "elsewhere");
  fs::create_directory_symlink(scratch_.path() / "elsewhere", plans / name);
  r = run_step(step({"layerplan=auto", "layerplan-model=alexnet"}, {"plan_dir=" + plans.string()}), kPlugin);
  expect_failed_step(r, "not a symlink");
  EXPECT_TRUE(fs::is_empty(scratch_.path() / "elsewhere"));
}

// The three nodes of a step share the working directory: one plans, the other two take its
// plan, and each says which in the job's output (docs/slurm-plugin.md, "Plan once per step").
TEST_F(StepdTest, ThreeNodesSharingTheFolderPlanOnce) {
  std::vector<Step> nodes;
  for (uint32_t id = 0; id < 3; ++id) {
    Step s = step({"layerplan=auto", "layerplan-model=alexnet"});
    s.job_id = 91;
    s.node_id = id;
    s.nnodes = 3;
    nodes.push_back(s);
  }
  const std::vector<StepResult> results = run_steps_at_once(nodes, kPlugin);
  int here = 0, from = 0;
  std::string plans, all;
  for (size_t i = 0; i < results.size(); ++i) {
    const StepResult& r = results[i];
    ASSERT_TRUE(r.stand_in_ok());
    EXPECT_EQ(r.task_init_rc, 0) << r.all_output();
    all += r.all_output();
    const std::string prefix = "layerplan: job 91.0 node " + std::to_string(i) + ": ";
    for (const std::string& line : r.output) {
      if (line == prefix + "planned here") ++here;
      if (line.rfind(prefix + "plan from node ", 0) == 0) ++from;
    }
    plans += r.env.count("LAYERPLAN_PLAN") ? r.env.at("LAYERPLAN_PLAN") + "\n" : "none\n";
  }
  EXPECT_EQ(here, 1) << all;
  EXPECT_EQ(from, 2) << all;
  const std::string one = (work_ / "layerplan-91.0.json").string() + "\n";
  EXPECT_EQ(plans, one + one + one);
}

// Node 0 speaks for the step in the job's output: when it takes node 1's plan it still
// prints the explain table, from node 1's report, and the file node 1 wrote.
TEST_F(StepdTest, ANodeThatTakesAnotherNodesPlanPrintsItsExplainTable) {
  Step first = step({"layerplan=auto", "layerplan-model=alexnet", "layerplan-explain"});
  first.job_id = 93;
  first.nnodes = 3;
  first.node_id = 1;
  const StepResult winner = run_step(first, kPlugin);
  ASSERT_TRUE(winner.stand_in_ok());
  EXPECT_EQ(winner.all_output(), "layerplan: job 93.0 node 1: planned here\n");  // node 1 prints no table
  Step second = first;
  second.node_id = 0;
  const StepResult r = run_step(second, kPlugin);
  ASSERT_TRUE(r.stand_in_ok());
  EXPECT_EQ(r.task_init_rc, 0) << r.all_output();
  ASSERT_FALSE(r.output.empty());
  EXPECT_EQ(r.output.front().rfind("layerplan: job 93.0 node 0: plan from node 1 (", 0), 0u) << r.all_output();
  EXPECT_NE(r.all_output().find("compute ms"), std::string::npos) << r.all_output();
  EXPECT_NE(r.all_output().find("by the timeline"), std::string::npos) << r.all_output();
  EXPECT_EQ(r.env.at("LAYERPLAN_PLAN"), winner.env.at("LAYERPLAN_PLAN"));
  EXPECT_EQ(r.env.at("LAYERPLAN_SUMMARY"), winner.env.at("LAYERPLAN_SUMMARY"));
}

// plugstack.conf's plan_once=off: every node plans, as before plan-once, and says so.
TEST_F(StepdTest, PlanOnceOffMakesEveryNodePlan) {
  std::vector<Step> nodes;
  for (uint32_t id = 0; id < 3; ++id) {
    Step s = step({"layerplan=auto", "layerplan-model=alexnet"}, {"plan_once=off"});
    s.job_id = 92;
    s.node_id = id;
    s.nnodes = 3;
    nodes.push_back(s);
  }
  int here = 0;
  std::string all;
  for (const StepResult& r : run_steps_at_once(nodes, kPlugin)) {
    ASSERT_TRUE(r.stand_in_ok());
    EXPECT_EQ(r.task_init_rc, 0) << r.all_output();
    all += r.all_output();
    for (const std::string& line : r.output) here += line.find(": planned here") != std::string::npos ? 1 : 0;
  }
  EXPECT_EQ(here, 3) << all;
  for (const auto& entry : fs::directory_iterator(work_)) {
    EXPECT_EQ(entry.path().extension(), ".json") << entry.path();
  }
}

// A single-node step, and the batch script, have nobody to share with: no lock, no line.
TEST_F(StepdTest, ASingleNodeStepPlansWithoutALock) {
  const StepResult r = run_step(step({"layerplan=auto", "layerplan-model=alexnet"}), kPlugin);
  ASSERT_TRUE(r.stand_in_ok());
  EXPECT_EQ(r.task_init_rc, 0) << r.all_output();
  EXPECT_EQ(r.all_output().find("planned here"), std::string::npos) << r.all_output();
  for (const auto& entry : fs::directory_iterator(work_)) {
    EXPECT_EQ(entry.path().extension(), ".json") << entry.path();
  }
}

// --layerplan=data runs no search: the plan file's search has no eliminations and no time.
TEST_F(StepdTest, ABaselineModeRunsNoSearch) {
  const StepResult r = run_step(step({"layerplan=data", "layerplan-model=resnet50"}), kPlugin);
  ASSERT_TRUE(r.stand_in_ok());
  ASSERT_EQ(r.task_init_rc, 0) << r.all_output();
  std::ifstream in(r.env.at("LAYERPLAN_PLAN"));
  std::ostringstream s;
  s << in.rdbuf();
  EXPECT_NE(s.str().find("\"node_eliminations\": 0"), std::string::npos);
  EXPECT_NE(s.str().find("\"seconds\": 0.0"), std::string::npos) << s.str().substr(s.str().find("\"search\""));
}

}  // namespace
}  // namespace layerplan
