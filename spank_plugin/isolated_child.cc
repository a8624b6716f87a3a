#include "spank_plugin/isolated_child.h"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace layerplan::spank {

namespace {

using Clock = std::chrono::steady_clock;

// The child's exit codes for its own setup failures (work() itself exits 0).
constexpr int kExitDescriptors = 120;
constexpr int kExitPrivileges = 121;
constexpr int kExitLimits = 122;
constexpr int kExitWorkThrew = 123;
constexpr int kExitWrite = 124;
constexpr int kPipeFd = 3;  // where the child keeps its end of the pipe
// How long the parent waits to reap a child it has killed before it gives up on it.
constexpr int kReapGraceMs = 5000;

// ---- the child --------------------------------------------------------------------------

// Default dispositions and nothing blocked, so that a crash ends the child by its signal
// and SIGXCPU ends it at the CPU limit, whatever handlers slurmstepd installed.
void reset_signals() {
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) std::signal(sig, SIG_DFL);
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
}

// The pipe on fd 3, /dev/null on 0, 1 and 2, every other inherited descriptor closed.
bool isolate_descriptors(int pipe_fd) {
  if (pipe_fd != kPipeFd) {
    if (::dup2(pipe_fd, kPipeFd) != kPipeFd) return false;
    ::close(pipe_fd);
  }
  const int null_fd = ::open("/dev/null", O_RDWR);
  if (null_fd < 0) return false;
  for (int fd = 0; fd <= 2; ++fd) {
    if (null_fd != fd && ::dup2(null_fd, fd) != fd) return false;
  }
  if (null_fd > kPipeFd) ::close(null_fd);
  if (::syscall(SYS_close_range, kPipeFd + 1, ~0U, 0) != 0) {
    // Kernels before 5.9: close them one by one.
    const long max_fd = ::sysconf(_SC_OPEN_MAX);
    for (long fd = kPipeFd + 1; fd < (max_fd > 0 ? max_fd : 65536); ++fd) ::close(static_cast<int>(fd));
  }
  return true;
}

// Real, effective and saved ids all become the user's, groups included; then checks that
// none of them is root's and that root cannot be regained. A process that is not root in
// any id (a test run by a normal user) can only already be `who`.
bool become_user(const ChildIdentity& who) {
  uid_t ruid = 0, euid = 0, suid = 0;
  if (::getresuid(&ruid, &euid, &suid) != 0) return false;
  if (ruid == 0 || euid == 0 || suid == 0) {
    if (euid != 0 && ::seteuid(0) != 0) return false;  // slurmstepd dropped only the effective id
    if (::setgroups(who.groups.size(), who.groups.data()) != 0) return false;
    if (::setresgid(who.gid, who.gid, who.gid) != 0) return false;
    if (::setresuid(who.uid, who.uid, who.uid) != 0) return false;
  }
  gid_t rgid = 0, egid = 0, sgid = 0;
  if (::getresuid(&ruid, &euid, &suid) != 0 || ::getresgid(&rgid, &egid, &sgid) != 0) return false;
  if (ruid != who.uid || euid != who.uid || suid != who.uid) return false;
  if (rgid != who.gid || egid != who.gid || sgid != who.gid) return false;
  if (who.uid != 0 && (::setresuid(-1, 0, -1) == 0 || ::setuid(0) == 0)) return false;
  return true;
}

// Bytes the process maps now (the whole of slurmstepd's address space, inherited).
bool mapped_bytes(size_t& out) {
  const int fd = ::open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[128];
  const ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return false;
  buf[n] = '\0';
  const unsigned long long pages = std::strtoull(buf, nullptr, 10);
  out = static_cast<size_t>(pages) * static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  return pages > 0;
}

// Lowers a limit to `value` (never raises the hard limit, which the user could not).
bool lower_limit(int resource, rlim_t value) {
  struct rlimit now {};
  if (::getrlimit(resource, &now) != 0) return false;
  const rlim_t hard = now.rlim_max == RLIM_INFINITY || value < now.rlim_max ? value : now.rlim_max;
  const struct rlimit want { hard, hard };
  return ::setrlimit(resource, &want) == 0;
}

bool set_limits(const ChildLimits& limits) {
  size_t mapped = 0;
  if (!mapped_bytes(mapped)) return false;
  const auto cpu_s = static_cast<rlim_t>(limits.cpu_s < 1.0 ? 1.0 : limits.cpu_s + 0.999);
  struct rlimit cpu {};
  if (::getrlimit(RLIMIT_CPU, &cpu) != 0) return false;
  // SIGXCPU at the soft limit, SIGKILL at the hard one a second later.
  if (cpu.rlim_max == RLIM_INFINITY || cpu_s + 1 <= cpu.rlim_max) {
    const struct rlimit want { cpu_s, cpu_s + 1 };
    if (::setrlimit(RLIMIT_CPU, &want) != 0) return false;
  }
  return lower_limit(RLIMIT_AS, static_cast<rlim_t>(mapped + limits.memory_bytes)) && lower_limit(RLIMIT_CORE, 0);
}

[[noreturn]] void child_main(int pipe_fd, pid_t parent, const ChildIdentity& who, const ChildLimits& limits,
                             const std::function<std::string()>& work) {
  reset_signals();
  if (!isolate_descriptors(pipe_fd)) ::_exit(kExitDescriptors);
  if (!become_user(who)) ::_exit(kExitPrivileges);
  // Set after the ids change, which clears it; dies with slurmstepd.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(kExitPrivileges);
  ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  if (!set_limits(limits)) ::_exit(kExitLimits);
  std::string output;
  try {
    output = work();
  } catch (...) {
    ::_exit(kExitWorkThrew);
  }
  ::_exit(write_all(kPipeFd, output) ? 0 : kExitWrite);
}

// ---- the parent -------------------------------------------------------------------------

int ms_until(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left <= 0 ? 0 : static_cast<int>(left < 1000000 ? left : 1000000);
}

enum class ReadEnd { kEof, kDeadline, kTooMuch, kError };

// Reads the child's output until EOF, the deadline or the cap.
ReadEnd read_output(int fd, Clock::time_point deadline, size_t cap, std::string& out) {
  char buf[16384];
  for (;;) {
    struct pollfd p {
      fd, POLLIN, 0
    };
    const int wait_ms = ms_until(deadline);
    const int ready = ::poll(&p, 1, wait_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) return ReadEnd::kError;
    if (ready == 0) return ReadEnd::kDeadline;
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n < 0) return ReadEnd::kError;
    if (n == 0) return ReadEnd::kEof;
    if (out.size() + static_cast<size_t>(n) > cap) return ReadEnd::kTooMuch;
    out.append(buf, static_cast<size_t>(n));
  }
}

// waitpid(WNOHANG) every 10 ms until the child is reaped or the deadline passes.
bool reap_by(pid_t pid, Clock::time_point deadline, int& status) {
  for (;;) {
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) return true;
    if (r < 0 && errno != EINTR) {
      status = -1;  // reaped by someone else: nothing to wait for
      return true;
    }
    if (Clock::now() >= deadline) return false;
    ::poll(nullptr, 0, 10);
  }
}

std::string seconds_text(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", s);
  return text;
}

std::string exit_failure(int code) {
  switch (code) {
    case kExitDescriptors:
      return "could not set up its descriptors";
    case kExitPrivileges:
      return "could not become the job's user for good";
    case kExitLimits:
      return "could not set its resource limits";
    case kExitWorkThrew:
      return "failed with an internal error";
    case kExitWrite:
      return "could not send its result";
    default:
      return "exited with status " + std::to_string(code);
  }
}

std::string status_failure(int status, const ChildLimits& limits) {
  // Reaped by someone else (a SIGCHLD set to SIG_IGN): the status is lost, but the child
  // closed its pipe after writing; the caller checks that what it sent is complete.
  if (status == -1) return "";
  if (WIFEXITED(status)) return WEXITSTATUS(status) == 0 ? "" : exit_failure(WEXITSTATUS(status));
  if (!WIFSIGNALED(status)) return "ended in an unknown way";
  const int sig = WTERMSIG(status);
  if (sig == SIGXCPU) return "used up its CPU-time limit of " + seconds_text(limits.cpu_s) + " s";
  const char* name = ::strsignal(sig);
  return "crashed (signal " + std::to_string(sig) + ", " + (name ? name : "unknown") + ")";
}

}  // namespace

ChildOutcome run_isolated(const ChildIdentity& who, const ChildLimits& limits,
                          const std::function<std::string()>& work) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(std::string("cannot create a pipe: ") + strerror(errno));
  const pid_t parent = ::getpid();
  const Clock::time_point deadline =
      Clock::now() + std::chrono::milliseconds(static_cast<long long>(limits.deadline_s * 1e3));
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int err = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    throw std::runtime_error(std::string("cannot fork: ") + strerror(err));
  }
  if (pid == 0) {
    ::close(fds[0]);
    child_main(fds[1], parent, who, limits, work);
  }
  ::close(fds[1]);
  ChildOutcome outcome;
  const ReadEnd end = read_output(fds[0], deadline, limits.max_output_bytes, outcome.output);
  ::close(fds[0]);
  int status = 0;
  const bool reaped = end == ReadEnd::kEof && reap_by(pid, deadline, status);
  if (!reaped) {
    ::kill(pid, SIGKILL);
    if (!reap_by(pid, Clock::now() + std::chrono::milliseconds(kReapGraceMs), status)) status = -2;
    outcome.output.clear();
    if (end == ReadEnd::kTooMuch) {
      outcome.failure = "sent more than " + std::to_string(limits.max_output_bytes) + " bytes and was killed";
    } else if (end == ReadEnd::kError) {
      outcome.failure = "could not be read from and was killed";
    } else {
      outcome.failure = "did not finish within " + seconds_text(limits.deadline_s) + " s and was killed";
    }
    if (status == -2) outcome.failure += " (and could not be reaped)";
    return outcome;
  }
  outcome.failure = status_failure(status, limits);
  if (!outcome.failure.empty()) outcome.output.clear();
  return outcome;
}

bool write_all(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace layerplan::spank
