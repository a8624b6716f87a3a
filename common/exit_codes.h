#pragma once
// Exit statuses that mean something besides success (0), failure (1) and a usage error (2).

namespace layerplan {

// `layerplan train` stopped by SIGTERM or SIGUSR1 after a whole step, with its checkpoint
// written: run it again with --resume to continue (a batch script requeues the job on it).
// 75 is EX_TEMPFAIL of <sysexits.h>: a temporary failure, to be retried.
constexpr int kExitStoppedToResume = 75;

}  // namespace layerplan
