#pragma once
// Starts N ranks of a command on this machine, as `torchrun --nproc-per-node N` does,
// and watches them until all have finished or one has failed.
//
// Each rank is a child process with:
//   LAYERPLAN_RANK, LAYERPLAN_LOCAL_RANK  k (0..N-1)
//   LAYERPLAN_WORLD_SIZE                  N
//   LAYERPLAN_STORE_DIR                   a fresh rendezvous directory (mkdtemp in $TMPDIR, else
//                                         /tmp), removed at the end, even by SIGKILL (below)
//   LAYERPLAN_BACKEND                     the backend ("cpu" or "gpu": rank k then uses the k-th visible GPU)
//   OMP_NUM_THREADS                       the number of CPUs in its share
// and is pinned (sched_setaffinity) to its share of the CPUs this process may use
// (common/cpu_shares.h). Its stdin is /dev/null; each line it writes to stdout or
// stderr is copied to ours with a "[rank k] " prefix.
//
// All ranks form one process group (launcher/rank_group.h), which the launcher signals as
// a whole:
//   - a rank that exits non-zero or is killed by a signal is a failure: the launcher sends
//     SIGTERM to the group at once, then SIGKILL after the grace period, and reports that
//     rank (the first to fail) with its exit status and the last line it wrote to stderr;
//   - SIGINT, SIGTERM or SIGHUP sent to the launcher (Ctrl-C) is forwarded to the group,
//     followed by SIGKILL after the grace period; a second one sends SIGKILL at once;
//   - SIGUSR1 is forwarded to the group and nothing else (`layerplan train` stops after the
//     step with a checkpoint); a rank that exits with kExitStoppedToResume (75,
//     common/exit_codes.h) has not failed, and the launcher then exits 75 too;
//   - however the launch ends (all ranks done, a failure, a signal, an exception), the
//     group gets SIGKILL, so nothing a rank started in the background stays running, and
//     so do the processes that left the group but were re-parented to the launcher, its
//     child subreaper (launcher/adopted_children.h);
//   - if the launcher itself dies (SIGKILL), each rank gets SIGKILL from the kernel
//     (PR_SET_PDEATHSIG), and the group's watchdog kills the rest of the group, after which
//     a process it left outside the group removes the rendezvous directory.
// Not covered: a process that has left the group (setsid) when the launcher dies by
// SIGKILL; that takes a cgroup (systemd-run --scope, Slurm's proctrack/cgroup).
#include <chrono>
#include <string>
#include <vector>

namespace layerplan {

struct LaunchOptions {
  int nproc = 1;
  std::vector<std::string> command;  // program (looked up in PATH) and its arguments
  std::string backend = "cpu";
  // Between SIGTERM and SIGKILL when the ranks are being stopped.
  std::chrono::milliseconds grace_period{3000};
  // Where the ranks' prefixed output and the launcher's own notes go.
  int out_fd = 1;
  int err_fd = 2;
};

struct LaunchResult {
  // What `layerplan launch` exits with: 0 when every rank exited 0; 75 when ranks stopped to
  // be resumed (and none failed); else the failing
  // rank's exit status, or 128 + the signal that killed it; 128 + the signal the
  // launcher received when it was interrupted.
  int exit_code = 0;
  int failed_rank = -1;  // -1: none failed
  // One line saying what happened, e.g. "rank 2 exited with status 3: <its last stderr line>".
  std::string message;
};

// Runs the ranks to the end. Throws UsageError for bad options (nproc < 1, an empty
// command, a program not found in PATH, a backend other than "cpu" or "gpu"), before starting any.
LaunchResult launch_local(const LaunchOptions& options);

}  // namespace layerplan
