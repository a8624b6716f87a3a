#include "launcher/local_launcher.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/async_safe_write.h"
#include "common/cpu_shares.h"
#include "common/error.h"
#include "common/exit_codes.h"
#include "launcher/adopted_children.h"
#include "launcher/rank_group.h"
#include "launcher/rank_process.h"

namespace layerplan {
namespace {

using Clock = std::chrono::steady_clock;

// The self-pipe that signal handlers write to, so that poll() wakes up.
int g_wake_fd = -1;
volatile sig_atomic_t g_signal = 0;  // the last SIGINT/SIGTERM/SIGHUP/SIGUSR1 received

void on_signal(int sig) {
  const int saved = errno;
  if (sig != SIGCHLD) g_signal = sig;
  const char byte = 's';
  if (g_wake_fd >= 0) [[maybe_unused]]
    ssize_t ignored = ::write(g_wake_fd, &byte, 1);
  errno = saved;
}

// Installs the handlers for the duration of a launch and restores the old ones after.
class SignalScope {
 public:
  explicit SignalScope(int wake_fd) {
    g_wake_fd = wake_fd;
    g_signal = 0;
    struct sigaction action {};
    action.sa_handler = on_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART | SA_NOCLDSTOP;
    for (size_t i = 0; i < kSignals.size(); ++i) sigaction(kSignals[i], &action, &old_[i]);
    // A closed stdout must not kill the launcher while ranks run; exec resets this in the ranks.
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ignore, &old_pipe_);
  }
  ~SignalScope() {
    for (size_t i = 0; i < kSignals.size(); ++i) sigaction(kSignals[i], &old_[i], nullptr);
    sigaction(SIGPIPE, &old_pipe_, nullptr);
    g_wake_fd = -1;
  }
  SignalScope(const SignalScope&) = delete;
  SignalScope& operator=(const SignalScope&) = delete;

 private:
  static constexpr std::array<int, 5> kSignals{SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGUSR1};
  std::array<struct sigaction, 5> old_{};
  struct sigaction old_pipe_ {};
};

// The rendezvous directory of one launch, removed with everything in it at the end.
class StoreDir {
 public:
  StoreDir() {
    std::error_code ec;
    std::filesystem::path base = std::filesystem::temp_directory_path(ec);
    if (ec) base = "/tmp";
    std::string templ = (base / "layerplan-rendezvous-XXXXXX").string();
    if (!::mkdtemp(templ.data())) {
      throw std::runtime_error("cannot create a rendezvous directory in " + base.string() + ": " +
                               std::strerror(errno));
    }
    path_ = templ;
  }
  ~StoreDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  StoreDir(const StoreDir&) = delete;
  StoreDir& operator=(const StoreDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

bool is_executable_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

// The program's path as execvp would find it, or "" when there is none.
std::string find_program(const std::string& name) {
  if (name.find('/') != std::string::npos) return is_executable_file(name) ? name : "";
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    const size_t end = std::min(dirs.find(':', start), dirs.size());
    std::string candidate = end > start ? dirs.substr(start, end - start) : ".";
    candidate += '/';
    candidate += name;
    if (is_executable_file(candidate)) return candidate;
    start = end + 1;
  }
  return "";
}

std::string describe_status(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* name = ::strsignal(sig);
    return "was killed by signal " + std::to_string(sig) + (name ? std::string(" (") + name + ")" : "");
  }
  return "ended with wait status " + std::to_string(status);
}

int exit_code_of(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

// The program to run, after checking the options; throws UsageError before anything starts.
std::string checked_program(const LaunchOptions& options) {
  require(options.nproc >= 1, "--nproc " + std::to_string(options.nproc) + ": expected 1 or more ranks");
  require(options.nproc <= 4096, "--nproc " + std::to_string(options.nproc) + ": expected at most 4096 ranks");
  require(options.backend == "cpu" || options.backend == "gpu",
          "--backend '" + options.backend + "': expected cpu or gpu");
  require(!options.command.empty(),
          "expected the command to run after --, e.g. layerplan launch --nproc 2 -- ./program args");
  std::string program = find_program(options.command[0]);
  require(!program.empty(), "command '" + options.command[0] + "': expected an executable file" +
                                (options.command[0].find('/') == std::string::npos ? " in PATH" : ""));
  return program;
}

// Each rank's CPUs; says so when the ranks must share them.
std::vector<CpuShare> rank_cpus(const LaunchOptions& options) {
  const std::vector<int> cpus = allowed_cpus();
  if (options.nproc > static_cast<int>(cpus.size())) {
    const std::string note = "layerplan launch: " + std::to_string(options.nproc) + " ranks on " +
                             std::to_string(cpus.size()) + " CPUs: ranks share CPUs, 1 thread each\n";
    write_async_safe(options.err_fd, note.c_str());
  }
  return split_cpus(cpus.empty() ? std::vector<int>{0} : cpus, options.nproc);
}

// The self-pipe the signal handlers write to.
struct WakePipe {
  WakePipe() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) throw std::runtime_error(std::string("pipe: ") + strerror(errno));
    read = Fd(fds[0]);
    write = Fd(fds[1]);
  }
  Fd read, write;
};

// Starts every rank in `group`. Should one fail to start, those started are killed by
// their destructors.
std::vector<RankProcess> start_ranks(const RankCommand& command, const std::vector<CpuShare>& shares,
                                     const RankGroup& group) {
  std::vector<RankProcess> ranks;
  ranks.reserve(shares.size());
  for (size_t k = 0; k < shares.size(); ++k) ranks.emplace_back(command, static_cast<int>(k), shares[k], group.id());
  return ranks;
}

// Watches the ranks until all have exited: forwards their output as it comes, and stops
// them all when one fails or the launcher is signalled (local_launcher.h says how).
class RankWatcher {
 public:
  RankWatcher(std::vector<RankProcess>& ranks, RankGroup& group, AdoptedChildren& adopted,
              std::chrono::milliseconds grace_period, int wake_fd)
      : ranks_(ranks),
        group_(group),
        adopted_(adopted),
        grace_period_(grace_period),
        wake_fd_(wake_fd),
        running_(static_cast<int>(ranks.size())) {}

  void run() {
    while (running_ > 0) {
      wait_for_events();
      for (RankProcess& r : ranks_) r.forward_output();
      if (const int sig = g_signal; sig != 0) {
        g_signal = 0;
        handle_signal(sig);
      }
      reap_ranks();
      reap_adopted();
      if (stopping_ && !killed_ && running_ > 0 && Clock::now() >= kill_at_) kill_all();
    }
  }

  int failed() const { return failed_; }                  // the first rank to fail, -1 if none
  int interrupted_by() const { return interrupted_by_; }  // the signal the launcher received, 0 if none

 private:
  void kill_all() {
    group_.kill_all();
    killed_ = true;
  }

  // Until a rank writes or exits, a signal arrives or it is time to check again.
  void wait_for_events() const {
    std::vector<pollfd> fds{{wake_fd_, POLLIN, 0}};
    for (const RankProcess& r : ranks_) r.add_pipes(fds);
    int timeout_ms = 500;  // also a safety net should a SIGCHLD be missed
    if (stopping_ && !killed_) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(kill_at_ - Clock::now()).count();
      timeout_ms = static_cast<int>(std::clamp<long long>(left, 0, 500));
    }
    ::poll(fds.data(), fds.size(), timeout_ms);
    char sink[64];
    while (::read(wake_fd_, sink, sizeof sink) > 0) {
    }
  }

  void handle_signal(int sig) {
    if (sig == SIGUSR1) {  // a request to the ranks (layerplan train: stop after this step), not a stop
      group_.signal(sig);
      return;
    }
    if (interrupted_by_ != 0 || (stopping_ && failed_ >= 0)) {
      kill_all();  // asked again: no more grace
    } else {
      interrupted_by_ = sig;
      begin_stop(sig);
    }
  }

  void reap_ranks() {
    for (size_t k = 0; k < ranks_.size(); ++k) {
      RankProcess& r = ranks_[k];
      if (!r.reap()) continue;
      --running_;
      // A rank that stopped to be resumed (train after SIGTERM or SIGUSR1) has not failed.
      const bool ok =
          WIFEXITED(r.status()) && (WEXITSTATUS(r.status()) == 0 || WEXITSTATUS(r.status()) == kExitStoppedToResume);
      if (!ok && !stopping_) {
        failed_ = static_cast<int>(k);
        begin_stop(SIGTERM);
      }
    }
  }

  void begin_stop(int sig) {
    stopping_ = true;
    kill_at_ = Clock::now() + grace_period_;
    group_.signal(sig);
  }

  // Adopted processes that have exited would stay zombies until the end; a look once a
  // second is enough.
  void reap_adopted() {
    if (Clock::now() < next_adopted_reap_) return;
    next_adopted_reap_ = Clock::now() + std::chrono::seconds(1);
    std::set<pid_t> own{group_.id()};
    for (const RankProcess& r : ranks_) own.insert(r.pid());
    adopted_.reap_exited(own);
  }

  std::vector<RankProcess>& ranks_;
  RankGroup& group_;
  AdoptedChildren& adopted_;
  const std::chrono::milliseconds grace_period_;
  const int wake_fd_;
  int running_;
  int failed_ = -1;
  int interrupted_by_ = 0;
  bool stopping_ = false, killed_ = false;
  Clock::time_point kill_at_{};
  Clock::time_point next_adopted_reap_{};
};

LaunchResult result_of(const std::vector<RankProcess>& ranks, const RankWatcher& watcher) {
  const int nproc = static_cast<int>(ranks.size());
  LaunchResult result;
  if (const int failed = watcher.failed(); failed >= 0) {
    const RankProcess& r = ranks[static_cast<size_t>(failed)];
    result.failed_rank = failed;
    result.exit_code = exit_code_of(r.status());
    if (result.exit_code == 0) result.exit_code = 1;
    std::string last = r.last_line();
    if (last.size() > 400) last = last.substr(0, 400) + "...";
    result.message = "rank " + std::to_string(failed) + " " + describe_status(r.status()) +
                     (last.empty() ? std::string(" (it wrote nothing)") : ": " + last) + "; stopped the other " +
                     std::to_string(nproc - 1) + " rank(s)";
  } else if (std::any_of(ranks.begin(), ranks.end(), [](const RankProcess& r) {
               return WIFEXITED(r.status()) && WEXITSTATUS(r.status()) == kExitStoppedToResume;
             })) {
    result.exit_code = kExitStoppedToResume;
    result.message = "the ranks stopped to be resumed (status " + std::to_string(kExitStoppedToResume) + ")";
  } else if (const int sig = watcher.interrupted_by(); sig != 0) {
    result.exit_code = 128 + sig;
    result.message =
        std::string("interrupted by ") + ::strsignal(sig) + "; stopped all " + std::to_string(nproc) + " rank(s)";
  } else {
    result.message = "all " + std::to_string(nproc) + " rank(s) exited with status 0";
  }
  return result;
}

}  // namespace

LaunchResult launch_local(const LaunchOptions& options) {
  const std::string program = checked_program(options);
  const std::vector<CpuShare> shares = rank_cpus(options);
  StoreDir store;
  WakePipe wake;
  Fd devnull(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  SignalScope signals(wake.write.get());
  // Declared in this order, so that on every way out the ranks, then their group, then
  // the processes they left to the launcher are killed (local_launcher.h).
  AdoptedChildren adopted;
  RankGroup group(store.path());
  const RankCommand command{.program = program,
                            .argv = options.command,
                            .world = options.nproc,
                            .store_dir = store.path(),
                            .backend = options.backend,
                            .stdin_fd = devnull.get(),
                            .out_fd = options.out_fd,
                            .err_fd = options.err_fd};
  std::vector<RankProcess> ranks = start_ranks(command, shares, group);
  RankWatcher watcher(ranks, group, adopted, options.grace_period, wake.read.get());
  watcher.run();
  // Whatever the ranks wrote before exiting is still in the pipes.
  for (RankProcess& r : ranks) {
    r.forward_output();
    r.finish_output();
  }
  // What the ranks started and left running goes with them, however the launch ended.
  group.kill_all();
  adopted.kill_all();
  return result_of(ranks, watcher);
}

}  // namespace layerplan
