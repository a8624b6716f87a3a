#include "runtime/training/batch_prefetcher.h"

#include <algorithm>
#include <utility>

namespace layerplan {

BatchPrefetcher::BatchPrefetcher(const SampleSource& source, EpochOrder order, int epoch, int64_t first, int64_t last,
                                 const Shape& input, std::vector<Interval> needed, const PrefetchOptions& options)
    : source_(source),
      order_(std::move(order)),
      epoch_(epoch),
      last_(last),
      input_(input),
      needed_(std::move(needed)),
      depth_(std::max(options.depth, 1)),
      next_to_start_(first),
      next_to_take_(first) {
  for (int t = 0; t < options.threads; ++t) threads_.emplace_back([this] { work(); });
}

BatchPrefetcher::~BatchPrefetcher() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  for (std::thread& t : threads_) t.join();
}

GlobalBatch BatchPrefetcher::assemble(int64_t b) const {
  return assemble_batch(source_, order_, epoch_, b, input_, needed_);
}

void BatchPrefetcher::work() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] {
      return stopping_ || error_ || next_to_start_ >= last_ || next_to_start_ < next_to_take_ + depth_;
    });
    if (stopping_ || error_ || next_to_start_ >= last_) return;
    const int64_t b = next_to_start_++;
    lock.unlock();
    GlobalBatch batch;
    std::exception_ptr error;
    try {
      batch = assemble(b);
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    if (error) {
      error_ = error;
    } else {
      ready_.emplace(b, std::move(batch));
    }
    changed_.notify_all();
  }
}

GlobalBatch BatchPrefetcher::next() {
  if (threads_.empty()) return assemble(next_to_take_++);
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return error_ || ready_.count(next_to_take_) > 0; });
  const auto it = ready_.find(next_to_take_);
  if (it == ready_.end()) std::rethrow_exception(error_);
  GlobalBatch batch = std::move(it->second);
  ready_.erase(it);
  ++next_to_take_;
  changed_.notify_all();
  return batch;
}

}  // namespace layerplan
