#pragma once
// Runs a piece of work on user input in a forked child that slurmstepd can survive: the
// child becomes the job's user for good (groups, real, effective and saved ids; checked
// that it cannot regain root), runs under CPU-time and address-space limits with no core
// dump, holds no descriptor but its pipe, and is killed at a deadline. Its result comes
// back as bytes over the pipe; the parent waits with poll() and waitpid(WNOHANG) only, so
// it never blocks past the deadline (plus a short grace to reap the killed child).
//
// For slurmstepd, a multi-threaded process: the child calls no Slurm function (another
// thread may have held Slurm's log lock at fork), ends with _exit() (no atexit handlers,
// no stdio flush), and starts no threads.
#include <sys/types.h>

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace layerplan::spank {

struct ChildIdentity {
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;  // supplementary groups
};

struct ChildLimits {
  double deadline_s = 20.0;                   // wall clock; past it the child gets SIGKILL
  double cpu_s = 20.0;                        // RLIMIT_CPU (SIGXCPU at the soft limit, SIGKILL one second later)
  size_t memory_bytes = size_t{4} << 30;      // RLIMIT_AS: this much above what the child maps at fork
  size_t max_output_bytes = size_t{1} << 20;  // more on the pipe is garbage: the child is killed
};

struct ChildOutcome {
  std::string output;   // what work() returned, when the child exited 0
  std::string failure;  // empty on success; else one line: crashed, timed out, exited N, too much output
};

// Forks; the child becomes `who` under `limits`, runs work() and writes its result to the
// pipe. work() must not throw (it should turn errors into its result); if it does, the
// child exits with a failure. Never throws for what the child does; throws
// std::runtime_error only when no child could be started (pipe or fork failed).
ChildOutcome run_isolated(const ChildIdentity& who, const ChildLimits& limits,
                          const std::function<std::string()>& work);

// Writes all of `bytes` to `fd`, retrying short writes and EINTR; false on any other failure.
bool write_all(int fd, const std::string& bytes);

}  // namespace layerplan::spank
