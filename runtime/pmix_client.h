#pragma once
// PMIx's key-value space (runtime/process_manager.h), for the tasks of `srun --mpi=pmix`
// (Slurm's mpi/pmix plugin with OpenPMIx's libpmix.so.2 on the nodes). The library is
// loaded with dlopen when the client is first used.
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "runtime/process_manager.h"

namespace layerplan {

class PmixClient : public ProcessManager {
 public:
  // Loads libpmix.so.2 and calls PMIx_Init on the first call; later calls return the
  // same client. Throws UsageError (one line) when the library is missing or the
  // initialisation fails.
  static PmixClient& instance();

  PmixClient(const PmixClient&) = delete;
  PmixClient& operator=(const PmixClient&) = delete;

  const char* name() const override { return "PMIx"; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void put(const std::string& key, std::span<const char> value) override;
  // Commits what this task put and fences every task of the step, collecting the data.
  void fence() override;
  std::vector<char> get(const std::string& key) override;

 private:
  PmixClient();
  ~PmixClient() override;
  struct Api;
  std::unique_ptr<Api> api_;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace layerplan
