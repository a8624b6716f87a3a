#pragma once
// The key-value space of the process manager that started this task: Slurm's PMI-2
// (`srun --mpi=pmi2`, runtime/pmi2_client.h) or PMIx (`srun --mpi=pmix`,
// runtime/pmix_client.h). Every task of the step puts keys, all meet at a fence, then each
// reads the others' keys. The ranks use it to exchange Gloo's addresses and anything rank 0
// must give the others (NCCL's unique id); docs/runtime.md ("Rendezvous") says which is
// used when. Each client loads its library with dlopen, only when the environment says
// the process runs under it, so the binary needs no PMI library where none is used.
#include <span>
#include <string>
#include <vector>

namespace layerplan {

class ProcessManager {
 public:
  virtual ~ProcessManager() = default;
  // For messages: "Slurm's PMI-2", "PMIx".
  virtual const char* name() const = 0;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Publishes `value` under `key` (visible to the other tasks after the next fence). A
  // key is put once per step, by one task.
  virtual void put(const std::string& key, std::span<const char> value) = 0;
  // Collective over every task of the step: returns once all tasks have called it, and
  // then every key put before it by any task can be read.
  virtual void fence() = 0;
  // The value a task put under `key` before the last fence; throws CommError when absent.
  virtual std::vector<char> get(const std::string& key) = 0;
};

enum class ProcessManagerKind {
  kNone,  // no process manager: `layerplan launch`, a plain `srun`, one process
  kPmi2,  // PMI_FD set: a task of `srun --mpi=pmi2`
  kPmix,  // PMIX_RANK set: a task of `srun --mpi=pmix`
};

// Which process manager started this process, from its environment.
ProcessManagerKind process_manager_from_env();

// The process's one connection to a process manager of that kind (initialised on the
// first call; a client may be initialised once per process). Throws UsageError (one line)
// when its library is missing or the initialisation fails, and for kNone.
ProcessManager& process_manager(ProcessManagerKind kind);

}  // namespace layerplan
