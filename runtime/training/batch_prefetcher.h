#pragma once
// Global batches assembled ahead of the step that takes them, by a pool of loader threads:
// a bounded queue of ready batches. Decoding images (image folders) runs beside the
// step's compute instead of before it. Each batch is assembled by one thread, several
// batches at once; they are handed out in order, and are the same whatever the number of
// threads (assemble_batch depends only on the batch's number).
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "runtime/training/train_data.h"

namespace layerplan {

struct PrefetchOptions {
  int threads = 2;  // 0: each batch is assembled when next() asks for it, on the caller's thread
  int depth = 2;    // batches assembled or being assembled ahead of the one taken
};

class BatchPrefetcher {
 public:
  // Batches [first, last) of `order` in epoch `epoch`; `source` must outlive the prefetcher.
  BatchPrefetcher(const SampleSource& source, EpochOrder order, int epoch, int64_t first, int64_t last,
                  const Shape& input, std::vector<Interval> needed, const PrefetchOptions& options);
  ~BatchPrefetcher();  // stops the threads after the batches they are assembling
  BatchPrefetcher(const BatchPrefetcher&) = delete;
  BatchPrefetcher& operator=(const BatchPrefetcher&) = delete;

  // Batch first, then first + 1, ...: waits for it if it is not ready. Rethrows what a
  // loader thread threw (a bad image under --strict-data).
  GlobalBatch next();

 private:
  void work();
  GlobalBatch assemble(int64_t b) const;

  const SampleSource& source_;
  const EpochOrder order_;
  const int epoch_;
  const int64_t last_;
  const Shape input_;
  const std::vector<Interval> needed_;
  const int depth_;

  std::mutex mutex_;
  std::condition_variable changed_;
  int64_t next_to_start_, next_to_take_;
  std::map<int64_t, GlobalBatch> ready_;
  std::exception_ptr error_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace layerplan
