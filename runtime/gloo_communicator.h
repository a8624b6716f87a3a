#pragma once
// The CPU communicator: Gloo's tcp transport, ranks meeting through a FileStore in a
// directory every rank can read and write (the launcher makes a fresh one per run), or,
// for the tasks of `srun --mpi=pmi2` or `--mpi=pmix`, through the process manager's
// key-value space (runtime/process_manager.h; docs/runtime.md, "Rendezvous", says which
// is used when).
//
// Point-to-point transfers use Gloo's unbound buffers. All-reduce and broadcast are
// run by this class as a ring and a binomial tree over those same transfers, so the
// byte counters are exactly what was sent (runtime/communicator.h). Only barrier is
// Gloo's own. Gloo's legacy algorithm classes and ContextFactory are never used: they
// pin the socket send buffer, which throttles large transfers
// (../shared/reference/runtime-libraries.md, section 1.6, has the figures).
#include <chrono>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "runtime/communicator.h"

namespace layerplan {

// Where the ranks exchange their addresses before connecting.
enum class Rendezvous {
  kDirectory,  // Gloo's FileStore in `store_dir` (`layerplan launch`, or a shared filesystem)
  kPmi2,       // Slurm's PMI-2 put/fence/get (srun --mpi=pmi2): nothing shared on disk. Its
               // fence takes every task of the step, so groups (create_group) must be the world.
  kPmix,       // PMIx put/commit/fence/get (srun --mpi=pmix), as kPmi2.
};

struct GlooOptions {
  int rank = 0;
  int world_size = 1;
  // This rank's index among the ranks on its node (informational: `layerplan launch`
  // pins CPUs itself; under srun, Slurm's --cpu-bind does).
  int local_rank = 0;
  Rendezvous rendezvous = Rendezvous::kDirectory;
  // kDirectory: an existing directory shared by all ranks, fresh for this run: Gloo's
  // FileStore never deletes its keys, so reusing a directory across runs fails.
  std::string store_dir;
  // Network interface the ranks listen on ("lo" on one machine).
  std::string interface = "lo";
  // Deadline of every operation, including the first rendezvous.
  std::chrono::milliseconds timeout{60000};
};

// Reads LAYERPLAN_RANK, LAYERPLAN_WORLD_SIZE, LAYERPLAN_STORE_DIR (set by
// `layerplan launch`), and optionally LAYERPLAN_COMM_TIMEOUT_S (seconds, default 60)
// and LAYERPLAN_COMM_INTERFACE (default "lo"). Throws UsageError naming the variable
// when one is missing or malformed.
GlooOptions gloo_options_from_env();

// How this process was started, from its environment, in this order:
//   LAYERPLAN_RANK set (`layerplan launch`)        gloo_options_from_env()
//   PMI_FD set, step of > 1 task (srun --mpi=pmi2) rank SLURM_PROCID, world
//                                                  SLURM_STEP_NUM_TASKS (= SLURM_NTASKS in a step),
//                                                  local rank SLURM_LOCALID, Rendezvous::kPmi2
//   PMIX_RANK set, step of > 1 task (--mpi=pmix)   the same, Rendezvous::kPmix
//   a step of > 1 task without PMI                 UsageError: run `srun --mpi=pmi2`
//   otherwise                                      nullopt: one process computes every device
std::optional<GlooOptions> world_from_env();

// Joins the world: returns once all `world_size` ranks have connected to each other
// (on every rank, so one may leave right away without failing the others), or throws
// CommError after the timeout. Throws UsageError for bad options (a rank outside
// the world, a missing store directory, an unknown interface).
std::unique_ptr<Communicator> connect_gloo(const GlooOptions& options);

// Gives every rank the bytes rank 0 passes as `value` (the other ranks' `value` is
// ignored), through the rendezvous the options name, without a communicator: how NCCL's
// unique id reaches the ranks. Collective: every rank of the world calls it with the same
// `key`, once per key. Throws CommError when rank 0's value does not arrive within the
// options' timeout (directory) or the process manager fails.
std::vector<char> share_from_rank0(const GlooOptions& options, const std::string& key, std::span<const char> value);

}  // namespace layerplan
