#pragma once
// Slurm's PMI-2 key-value space, for ranks started by `srun --mpi=pmi2`: every task of the
// step puts keys, all meet at a fence, then each reads the others' keys. libpmi2.so.0 is
// loaded at run time (dlopen), only when PMI_FD says the process runs under PMI-2, so the
// binary needs no PMI library where PMI is not used. gloo_communicator.cc adapts this to
// Gloo's rendezvous store; docs/runtime.md ("Rendezvous") says which rendezvous is used when.
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace layerplan {

// True when PMI_FD is set: this process is a task of a step launched with a PMI-2 plugin.
bool pmi2_present();

// The process's one PMI-2 connection (PMI2_Init may be called once per process).
class Pmi2Client {
 public:
  // Loads libpmi2.so.0 and calls PMI2_Init on the first call; later calls return the
  // same client. Throws UsageError (one line) when the library is missing or the
  // initialisation fails.
  static Pmi2Client& instance();

  Pmi2Client(const Pmi2Client&) = delete;
  Pmi2Client& operator=(const Pmi2Client&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }

  // Publishes `value` under `key` (visible to the other tasks after the next fence).
  // Keys longer than PMI's limit are hashed; values are hex-encoded and split into
  // numbered pieces that fit PMI's value limit. A key may be put once per step.
  void put(const std::string& key, std::span<const char> value);
  // Collective over every task of the step: returns once all tasks have called it, and
  // then every key put before it by any task can be read.
  void fence();
  // The value a task put under `key` before the last fence; throws CommError when absent.
  std::vector<char> get(const std::string& key);

 private:
  Pmi2Client();
  ~Pmi2Client();
  struct Api;
  std::unique_ptr<Api> api_;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace layerplan
