#include "launcher/rank_process.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "common/async_safe_write.h"

extern char** environ;

namespace layerplan {
namespace {

// The ranks' environment: ours, with the launcher's variables replaced.
std::vector<std::string> rank_environment(const RankCommand& command, int rank, int threads) {
  const std::vector<std::pair<std::string, std::string>> ours = {
      {"LAYERPLAN_RANK", std::to_string(rank)},
      {"LAYERPLAN_LOCAL_RANK", std::to_string(rank)},
      {"LAYERPLAN_WORLD_SIZE", std::to_string(command.world)},
      // torchrun's names, for scripts and libraries that read them (one node: local = global).
      {"RANK", std::to_string(rank)},
      {"LOCAL_RANK", std::to_string(rank)},
      {"WORLD_SIZE", std::to_string(command.world)},
      {"LOCAL_WORLD_SIZE", std::to_string(command.world)},
      {"LAYERPLAN_STORE_DIR", command.store_dir},
      {"LAYERPLAN_BACKEND", command.backend},
      {"OMP_NUM_THREADS", std::to_string(threads)}};
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    const std::string entry = *e;
    bool replaced = false;
    for (const auto& [key, value] : ours) replaced = replaced || entry.rfind(key + "=", 0) == 0;
    if (!replaced) env.push_back(entry);
  }
  for (const auto& [key, value] : ours) {
    std::string entry = key;
    entry += '=';
    entry += value;
    env.push_back(std::move(entry));
  }
  // libgomp's idle workers spin for a while after each parallel region (300,000 turns by
  // default) on the rank's cores, where the communicator's I/O thread must run to deliver
  // a message; 1,000 turns gave faster steps (docs/BENCHMARKS.md, "Predicted (cost model
  // calibrated to the CPU) against measured step time"). Kept when the user set a spin policy.
  const bool user_set = std::getenv("GOMP_SPINCOUNT") != nullptr || std::getenv("OMP_WAIT_POLICY") != nullptr;
  if (command.world > 1 && !user_set) env.push_back("GOMP_SPINCOUNT=1000");
  return env;
}

std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// What the child needs between fork and exec, ready-made: it may only make
// async-signal-safe calls.
struct ChildSetup {
  pid_t group = 0;
  pid_t launcher = 0;
  int stdin_fd = -1, out_fd = -1, err_fd = -1;
  cpu_set_t cpus;
  const char* program = nullptr;
  char* const* argv = nullptr;
  char* const* envp = nullptr;
};

[[noreturn]] void become_rank(const ChildSetup& c) {
  ::setpgid(0, c.group);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != c.launcher) ::_exit(1);  // the launcher died before prctl
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::signal(SIGPIPE, SIG_DFL);
  ::dup2(c.stdin_fd, 0);
  ::dup2(c.out_fd, 1);
  ::dup2(c.err_fd, 2);
  if (::sched_setaffinity(0, sizeof c.cpus, &c.cpus) != 0) {
    write_async_safe(2, "layerplan launch: cannot pin the rank to its CPUs\n");
    ::_exit(126);
  }
  ::execve(c.program, c.argv, c.envp);
  write_async_safe(2, "layerplan launch: cannot run ");
  write_async_safe(2, c.program);
  write_async_safe(2, ": ");
  write_async_safe(2, strerror(errno));
  write_async_safe(2, "\n");
  ::_exit(127);
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
    } else if (errno != EINTR) {
      return;  // EAGAIN: nothing more for now
    }
  }
}

}  // namespace

Fd& Fd::operator=(Fd&& other) noexcept {
  if (this != &other) {
    reset();
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

void Fd::reset() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

RankProcess::RankProcess(const RankCommand& command, int rank, const CpuShare& share, pid_t group) {
  std::vector<std::string> env = rank_environment(command, rank, share.threads);
  std::vector<char*> envp = c_strings(env);
  std::vector<std::string> args = command.argv;
  std::vector<char*> argv = c_strings(args);
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) {
    throw std::runtime_error(std::string("pipe: ") + strerror(errno));
  }
  ChildSetup child{.group = group,
                   .launcher = ::getpid(),
                   .stdin_fd = command.stdin_fd,
                   .out_fd = out[1],
                   .err_fd = err[1],
                   .cpus = {},
                   .program = command.program.c_str(),
                   .argv = argv.data(),
                   .envp = envp.data()};
  CPU_ZERO(&child.cpus);
  for (int c : share.cpus) CPU_SET(c, &child.cpus);
  pid_ = ::fork();
  if (pid_ < 0) throw std::runtime_error(std::string("fork: ") + strerror(errno));
  if (pid_ == 0) become_rank(child);
  ::setpgid(pid_, group);  // also here, so the rank is in the group before we ever signal it
  ::close(out[1]);
  ::close(err[1]);
  running_ = true;
  out_ = Fd(out[0]);
  err_ = Fd(err[0]);
  ::fcntl(out_.get(), F_SETFL, O_NONBLOCK);
  ::fcntl(err_.get(), F_SETFL, O_NONBLOCK);
  const std::string prefix = "[rank " + std::to_string(rank) + "] ";
  out_lines_ = std::make_unique<LinePrefixer>(prefix, command.out_fd);
  err_lines_ = std::make_unique<LinePrefixer>(prefix, command.err_fd);
}

RankProcess::RankProcess(RankProcess&& other) noexcept
    : pid_(other.pid_),
      running_(std::exchange(other.running_, false)),
      status_(other.status_),
      out_(std::move(other.out_)),
      err_(std::move(other.err_)),
      out_lines_(std::move(other.out_lines_)),
      err_lines_(std::move(other.err_lines_)) {}

RankProcess::~RankProcess() {
  if (!running_) return;
  ::kill(pid_, SIGKILL);
  while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
  }
}

bool RankProcess::reap() {
  if (!running_) return false;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) != pid_) return false;
  running_ = false;
  status_ = status;
  return true;
}

void RankProcess::add_pipes(std::vector<pollfd>& fds) const {
  if (out_.get() >= 0) fds.push_back({out_.get(), POLLIN, 0});
  if (err_.get() >= 0) fds.push_back({err_.get(), POLLIN, 0});
}

void RankProcess::forward_output() {
  drain(out_, *out_lines_);
  drain(err_, *err_lines_);
}

void RankProcess::finish_output() {
  out_lines_->finish();
  err_lines_->finish();
}

std::string RankProcess::last_line() const {
  const std::string& last = err_lines_->last_line();
  return last.empty() ? out_lines_->last_line() : last;
}

}  // namespace layerplan
