#include "runtime/process_manager.h"

#include <cstdlib>

#include "common/error.h"
#include "runtime/pmi2_client.h"
#include "runtime/pmix_client.h"

namespace layerplan {
namespace {

bool set(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0';
}

}  // namespace

ProcessManagerKind process_manager_from_env() {
  if (set("PMI_FD")) return ProcessManagerKind::kPmi2;  // Slurm's mpi/pmi2 gives its tasks a socket
  if (set("PMIX_RANK")) return ProcessManagerKind::kPmix;
  return ProcessManagerKind::kNone;
}

ProcessManager& process_manager(ProcessManagerKind kind) {
  switch (kind) {
    case ProcessManagerKind::kPmi2:
      return Pmi2Client::instance();
    case ProcessManagerKind::kPmix:
      return PmixClient::instance();
    case ProcessManagerKind::kNone:
      break;
  }
  throw UsageError("no process manager started this process: expected a task of `srun --mpi=pmi2` or `--mpi=pmix`");
}

}  // namespace layerplan
