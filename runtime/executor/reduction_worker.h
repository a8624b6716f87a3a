#pragma once
// One thread that runs posted tasks one at a time, in the order they were posted: the
// executor's communication thread for gradient-bucket all-reduces that overlap the
// backward (ExecutorOptions::overlap, docs/runtime.md "Overlapping the all-reduces").
// One thread and FIFO order keep every rank's reductions in the same order, which the
// point-to-point matching of a ring needs.
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <thread>

namespace layerplan {

class ReductionWorker {
 public:
  ReductionWorker();
  // Drops the tasks not started (their futures report std::future_error) and waits for the
  // running one.
  ~ReductionWorker();
  ReductionWorker(const ReductionWorker&) = delete;
  ReductionWorker& operator=(const ReductionWorker&) = delete;

  // Queues `task`; the future is ready once it has run and rethrows what it threw.
  std::future<void> post(std::function<void()> task);

 private:
  void run();

  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::packaged_task<void()>> queue_;
  bool stopping_ = false;
  std::thread thread_;  // last: started once the members above exist
};

}  // namespace layerplan
