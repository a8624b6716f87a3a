#include "runtime/executor/reduction_worker.h"

#include <utility>

namespace layerplan {

ReductionWorker::ReductionWorker() : thread_([this] { run(); }) {}

ReductionWorker::~ReductionWorker() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    queue_.clear();
  }
  ready_.notify_one();
  thread_.join();
}

std::future<void> ReductionWorker::post(std::function<void()> task) {
  std::packaged_task<void()> packaged(std::move(task));
  std::future<void> done = packaged.get_future();
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back(std::move(packaged));
  }
  ready_.notify_one();
  return done;
}

void ReductionWorker::run() {
  for (;;) {
    std::packaged_task<void()> task;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      ready_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    task();  // a packaged_task keeps what the task threw for its future
  }
}

}  // namespace layerplan
