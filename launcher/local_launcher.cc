#include "launcher/local_launcher.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <stdexcept>

#include "common/error.h"
#include "launcher/cpu_shares.h"
#include "launcher/line_prefixer.h"

extern char** environ;

namespace layerplan {
namespace {

using Clock = std::chrono::steady_clock;

// The self-pipe that signal handlers write to, so that poll() wakes up.
int g_wake_fd = -1;
volatile sig_atomic_t g_signal = 0;  // the last SIGINT/SIGTERM/SIGHUP received

void on_signal(int sig) {
  const int saved = errno;
  if (sig != SIGCHLD) g_signal = sig;
  const char byte = 's';
  if (g_wake_fd >= 0) [[maybe_unused]] ssize_t ignored = ::write(g_wake_fd, &byte, 1);
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
  static constexpr std::array<int, 4> kSignals{SIGCHLD, SIGINT, SIGTERM, SIGHUP};
  std::array<struct sigaction, 4> old_{};
  struct sigaction old_pipe_ {};
};

// A file descriptor closed on destruction.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() { reset(); }
  Fd(Fd&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  Fd& operator=(Fd&& other) noexcept {
    if (this != &other) {
      reset();
      fd_ = other.fd_;
      other.fd_ = -1;
    }
    return *this;
  }
  int get() const { return fd_; }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
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
    const std::string dir = end > start ? dirs.substr(start, end - start) : ".";
    if (is_executable_file(dir + "/" + name)) return dir + "/" + name;
    start = end + 1;
  }
  return "";
}

// The ranks' environment: ours, with the launcher's variables replaced.
std::vector<std::string> rank_environment(int rank, int world, const std::string& store_dir,
                                          const std::string& backend, int threads) {
  const std::vector<std::pair<std::string, std::string>> ours = {
      {"LAYERPLAN_RANK", std::to_string(rank)},   {"LAYERPLAN_LOCAL_RANK", std::to_string(rank)},
      {"LAYERPLAN_WORLD_SIZE", std::to_string(world)}, {"LAYERPLAN_STORE_DIR", store_dir},
      {"LAYERPLAN_BACKEND", backend},             {"OMP_NUM_THREADS", std::to_string(threads)}};
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    const std::string entry = *e;
    bool replaced = false;
    for (const auto& [key, value] : ours) replaced = replaced || entry.rfind(key + "=", 0) == 0;
    if (!replaced) env.push_back(entry);
  }
  for (const auto& [key, value] : ours) env.push_back(key + "=" + value);
  // libgomp's idle workers spin for a while after each parallel region (300,000 turns by
  // default) on the rank's cores, where the communicator's I/O thread must run to deliver
  // a message: with 8 cores per rank a 2-rank ResNet-50 step took 0.38 s spinning and
  // 0.27 s with 1,000 turns (docs/BENCHMARKS.md). Kept when the user set a spin policy.
  const bool user_set = std::getenv("GOMP_SPINCOUNT") != nullptr || std::getenv("OMP_WAIT_POLICY") != nullptr;
  if (world > 1 && !user_set) env.push_back("GOMP_SPINCOUNT=1000");
  return env;
}

std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// Writes `text` to fd without allocating, so a forked child may call it too.
void write_text(int fd, const char* text) { [[maybe_unused]] ssize_t ignored = ::write(fd, text, std::strlen(text)); }

struct Rank {
  pid_t pid = -1;
  bool running = false;
  int status = 0;  // from waitpid, once it has exited
  Fd out, err;
  std::unique_ptr<LinePrefixer> out_lines, err_lines;
};

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

// Reads what is available from a rank's pipe; closes it at end of file.
void drain(Fd& fd, LinePrefixer& lines) {
  char buffer[4096];
  while (fd.get() >= 0) {
    const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n > 0) {
      lines.feed(buffer, static_cast<size_t>(n));
    } else if (n == 0) {
      lines.finish();
      fd.reset();
    } else if (errno == EINTR) {
      continue;
    } else {
      return;  // EAGAIN: nothing more for now
    }
  }
}

}  // namespace

LaunchResult launch_local(const LaunchOptions& options) {
  require(options.nproc >= 1, "--nproc " + std::to_string(options.nproc) + ": expected 1 or more ranks");
  require(options.nproc <= 4096, "--nproc " + std::to_string(options.nproc) + ": expected at most 4096 ranks");
  require(options.backend == "cpu",
          "--backend '" + options.backend + "': expected cpu (the GPU backend is not built yet)");
  require(!options.command.empty(),
          "expected the command to run after --, e.g. layerplan launch --nproc 2 -- ./program args");
  const std::string program = find_program(options.command[0]);
  require(!program.empty(),
          "command '" + options.command[0] + "': expected an executable file" +
              (options.command[0].find('/') == std::string::npos ? " in PATH" : ""));

  const std::vector<int> cpus = allowed_cpus();
  const std::vector<CpuShare> shares =
      split_cpus(cpus.empty() ? std::vector<int>{0} : cpus, options.nproc);
  if (options.nproc > static_cast<int>(cpus.size())) {
    const std::string note = "layerplan launch: " + std::to_string(options.nproc) + " ranks on " +
                             std::to_string(cpus.size()) + " CPUs: ranks share CPUs, 1 thread each\n";
    write_text(options.err_fd, note.c_str());
  }

  StoreDir store;
  int wake[2];
  if (::pipe2(wake, O_CLOEXEC | O_NONBLOCK) != 0) throw std::runtime_error(std::string("pipe: ") + strerror(errno));
  Fd wake_read(wake[0]), wake_write(wake[1]);
  Fd devnull(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  SignalScope signals(wake_write.get());

  std::vector<std::string> args = options.command;
  std::vector<char*> argv = c_strings(args);
  const pid_t launcher_pid = ::getpid();
  std::vector<Rank> ranks(static_cast<size_t>(options.nproc));
  pid_t group = 0;

  const auto stop_group = [&](int sig) {
    if (group > 0) ::killpg(group, sig);
  };

  for (int k = 0; k < options.nproc; ++k) {
    Rank& rank = ranks[static_cast<size_t>(k)];
    std::vector<std::string> env =
        rank_environment(k, options.nproc, store.path(), options.backend, shares[static_cast<size_t>(k)].threads);
    std::vector<char*> envp = c_strings(env);
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int c : shares[static_cast<size_t>(k)].cpus) CPU_SET(c, &set);
    int out[2], err[2];
    if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) {
      stop_group(SIGKILL);
      throw std::runtime_error(std::string("pipe: ") + strerror(errno));
    }
    const pid_t pid = ::fork();
    if (pid < 0) {
      stop_group(SIGKILL);
      throw std::runtime_error(std::string("fork: ") + strerror(errno));
    }
    if (pid == 0) {
      // The child: only async-signal-safe calls from here to exec.
      ::setpgid(0, group);
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != launcher_pid) ::_exit(1);  // the launcher died before prctl
      sigset_t none;
      sigemptyset(&none);
      ::sigprocmask(SIG_SETMASK, &none, nullptr);
      ::signal(SIGPIPE, SIG_DFL);
      ::dup2(devnull.get(), 0);
      ::dup2(out[1], 1);
      ::dup2(err[1], 2);
      if (::sched_setaffinity(0, sizeof set, &set) != 0) {
        write_text(2, "layerplan launch: cannot pin the rank to its CPUs\n");
        ::_exit(126);
      }
      ::execve(program.c_str(), argv.data(), envp.data());
      write_text(2, "layerplan launch: cannot run ");
      write_text(2, program.c_str());
      write_text(2, ": ");
      write_text(2, strerror(errno));
      write_text(2, "\n");
      ::_exit(127);
    }
    if (group == 0) group = pid;
    ::setpgid(pid, group);  // also here, so the group exists before we ever signal it
    ::close(out[1]);
    ::close(err[1]);
    rank.pid = pid;
    rank.running = true;
    rank.out = Fd(out[0]);
    rank.err = Fd(err[0]);
    ::fcntl(rank.out.get(), F_SETFL, O_NONBLOCK);
    ::fcntl(rank.err.get(), F_SETFL, O_NONBLOCK);
    const std::string prefix = "[rank " + std::to_string(k) + "] ";
    rank.out_lines = std::make_unique<LinePrefixer>(prefix, options.out_fd);
    rank.err_lines = std::make_unique<LinePrefixer>(prefix, options.err_fd);
  }

  int running = options.nproc;
  int failed = -1;                  // the first rank to fail
  int interrupted_by = 0;           // the signal the launcher received, if any
  bool stopping = false, killed = false;
  Clock::time_point kill_at{};
  const auto begin_stop = [&](int sig) {
    stopping = true;
    kill_at = Clock::now() + options.grace_period;
    stop_group(sig);
  };

  while (running > 0) {
    std::vector<pollfd> fds{{wake_read.get(), POLLIN, 0}};
    for (Rank& r : ranks) {
      if (r.out.get() >= 0) fds.push_back({r.out.get(), POLLIN, 0});
      if (r.err.get() >= 0) fds.push_back({r.err.get(), POLLIN, 0});
    }
    int timeout_ms = 500;  // also a safety net should a SIGCHLD be missed
    if (stopping && !killed) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(kill_at - Clock::now()).count();
      timeout_ms = static_cast<int>(std::clamp<long long>(left, 0, 500));
    }
    ::poll(fds.data(), fds.size(), timeout_ms);
    char sink[64];
    while (::read(wake_read.get(), sink, sizeof sink) > 0) {
    }
    for (Rank& r : ranks) {
      drain(r.out, *r.out_lines);
      drain(r.err, *r.err_lines);
    }
    if (const int sig = g_signal; sig != 0) {
      g_signal = 0;
      if (interrupted_by != 0 || (stopping && failed >= 0)) {
        stop_group(SIGKILL);  // asked again: no more grace
        killed = true;
      } else {
        interrupted_by = sig;
        begin_stop(sig);
      }
    }
    for (size_t k = 0; k < ranks.size(); ++k) {
      Rank& r = ranks[k];
      if (!r.running) continue;
      int status = 0;
      const pid_t done = ::waitpid(r.pid, &status, WNOHANG);
      if (done != r.pid) continue;
      r.running = false;
      r.status = status;
      --running;
      const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
      if (!ok && !stopping) {
        failed = static_cast<int>(k);
        begin_stop(SIGTERM);
      }
    }
    if (stopping && !killed && running > 0 && Clock::now() >= kill_at) {
      stop_group(SIGKILL);
      killed = true;
    }
  }
  // Whatever the ranks wrote before exiting is still in the pipes.
  for (Rank& r : ranks) {
    drain(r.out, *r.out_lines);
    drain(r.err, *r.err_lines);
    r.out_lines->finish();
    r.err_lines->finish();
  }
  // Processes the ranks started and left behind in the group go with them on failure.
  if (stopping) stop_group(SIGKILL);

  LaunchResult result;
  if (failed >= 0) {
    const Rank& r = ranks[static_cast<size_t>(failed)];
    result.failed_rank = failed;
    result.exit_code = exit_code_of(r.status);
    if (result.exit_code == 0) result.exit_code = 1;
    std::string last = r.err_lines->last_line();
    if (last.empty()) last = r.out_lines->last_line();
    if (last.size() > 400) last = last.substr(0, 400) + "...";
    result.message = "rank " + std::to_string(failed) + " " + describe_status(r.status) +
                     (last.empty() ? std::string(" (it wrote nothing)") : ": " + last) + "; stopped the other " +
                     std::to_string(options.nproc - 1) + " rank(s)";
  } else if (interrupted_by != 0) {
    result.exit_code = 128 + interrupted_by;
    result.message = std::string("interrupted by ") + ::strsignal(interrupted_by) + "; stopped all " +
                     std::to_string(options.nproc) + " rank(s)";
  } else {
    result.message = "all " + std::to_string(options.nproc) + " rank(s) exited with status 0";
  }
  return result;
}

}  // namespace layerplan
