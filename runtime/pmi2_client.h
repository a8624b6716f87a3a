#pragma once
// Slurm's PMI-2 key-value space (runtime/process_manager.h), for the tasks of
// `srun --mpi=pmi2`. libpmi2.so.0 is loaded with dlopen when the client is first used.
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "runtime/process_manager.h"

namespace layerplan {

class Pmi2Client : public ProcessManager {
 public:
  // Loads libpmi2.so.0 and calls PMI2_Init on the first call; later calls return the
  // same client. Throws UsageError (one line) when the library is missing or the
  // initialisation fails.
  static Pmi2Client& instance();

  Pmi2Client(const Pmi2Client&) = delete;
  Pmi2Client& operator=(const Pmi2Client&) = delete;

  const char* name() const override { return "Slurm's PMI-2"; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  // Keys longer than PMI's limit are hashed; values are hex-encoded and split into
  // numbered pieces that fit PMI's value limit.
  void put(const std::string& key, std::span<const char> value) override;
  void fence() override;
  std::vector<char> get(const std::string& key) override;

 private:
  Pmi2Client();
  ~Pmi2Client() override;
  struct Api;
  std::unique_ptr<Api> api_;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace layerplan
