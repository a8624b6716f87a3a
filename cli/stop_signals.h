#pragma once
// SIGTERM and SIGUSR1 for `layerplan train`: instead of ending the process, they set a flag
// the trainer reads after each step (TrainerOptions::stop_signal), so the run stops after a
// whole step with a checkpoint. Slurm sends SIGTERM before killing a job (scancel, time
// limit, preemption) and SIGUSR1 where the job asked for it (`--signal=USR1@120`).
#include <csignal>

namespace layerplan {

// Installs the handlers (once per process) and returns the flag they set: 0 until a signal
// arrives, then its number.
const volatile std::sig_atomic_t* install_stop_signal_handlers();

}  // namespace layerplan
