// Gradient buckets' all-reduces overlapping the backward (ExecutorOptions::overlap), in one
// process: the same plans trained with overlap on and off give bitwise equal losses,
// parameters and traffic counts (the same all-reduces in the same order, only run on another
// thread), for data-parallel, layer-wise, OWT and random plans, small and default buckets,
// SGD and AdamW, with and without gradient clipping; a bucket's all-reduce runs while the
// backward goes on; and a transport that cannot reduce on another thread is refused.
// tests/executor_multiprocess_test.cc checks the same over Gloo on 2 and 4 ranks.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "model/zoo.h"
#include "tests/executor_test_util.h"

namespace layerplan::testing {
namespace {

constexpr int kSteps = 4;

void expect_identical(const TrainResult& on, const TrainResult& off, const std::string& what) {
  EXPECT_EQ(on.losses, off.losses) << what;
  ASSERT_EQ(on.params.size(), off.params.size()) << what;
  for (size_t id = 0; id < on.params.size(); ++id) {
    const LayerParams &a = on.params[id], &b = off.params[id];
    EXPECT_TRUE(a.weight == b.weight && a.bias == b.bias && a.running_mean == b.running_mean &&
                a.running_var == b.running_var)
        << what << ", layer " << id;
  }
  EXPECT_EQ(on.traffic.forward, off.traffic.forward) << what;
  EXPECT_EQ(on.traffic.backward, off.traffic.backward) << what;
  EXPECT_EQ(on.traffic.weight_sync, off.traffic.weight_sync) << what;
  EXPECT_EQ(on.traffic.statistics, off.traffic.statistics) << what;
  EXPECT_EQ(on.traffic.pairs, off.traffic.pairs) << what;
}

// Every plan of plans_to_test on `devices`, trained with overlap off and on.
void expect_overlap_changes_nothing(const ModelGraph& graph, int devices, ExecutorOptions options) {
  for (const NamedPlan& plan : plans_to_test(graph, devices, 3, 200u + static_cast<uint32_t>(devices))) {
    options.overlap = false;
    const TrainResult off = train_with(graph, plan.configs, kSteps, options);
    ASSERT_GT(std::abs(off.losses.front() - off.losses.back()), 1e-4) << plan.name;  // the weights move
    options.overlap = true;
    const TrainResult on = train_with(graph, plan.configs, kSteps, options);
    expect_identical(on, off,
                     graph.name() + " on " + std::to_string(devices) + " devices, " + plan.name + ", buckets of " +
                         std::to_string(options.gradient_bucket_bytes) + " bytes");
  }
}

ExecutorOptions sgd_with_buckets(int64_t bytes) {
  ExecutorOptions o;
  o.sgd = test_sgd();
  o.gradient_bucket_bytes = bytes;
  return o;
}

TEST(ExecutorOverlap, LeNet5SameNumbersOn1And4Devices) {
  for (const int devices : {1, 4}) {
    expect_overlap_changes_nothing(lenet5(4), devices, sgd_with_buckets(64));
    expect_overlap_changes_nothing(lenet5(4), devices, sgd_with_buckets(ExecutorOptions{}.gradient_bucket_bytes));
  }
}

TEST(ExecutorOverlap, ResidualSameNumbersOn2Devices) {
  expect_overlap_changes_nothing(residual_inception_net(), 2, sgd_with_buckets(256));
}

TEST(ExecutorOverlap, AdamWAndClippingSameNumbers) {
  ExecutorOptions adamw = sgd_with_buckets(128);
  adamw.optimizer = OptimizerKind::kAdamW;
  adamw.adamw.lr = 1e-3;
  expect_overlap_changes_nothing(lenet5(4), 4, adamw);
  ExecutorOptions clipped = sgd_with_buckets(128);
  clipped.clip_grad_norm = 0.05;  // below the gradients' norm: every step clips
  expect_overlap_changes_nothing(lenet5(4), 4, clipped);
  adamw.clip_grad_norm = 0.05;
  expect_overlap_changes_nothing(residual_inception_net(), 2, adamw);
}

// Holds the first weight-gradient all-reduce of a step until the backward has sent the
// input gradients of layer 1 (the last layer the backward visits), or 10 seconds: with
// overlap the backward goes on meanwhile; without it the backward waits for the all-reduce.
class HoldingTransport : public InProcessTransport {
 public:
  void exchange(const std::vector<BoxMove>& moves, const EdgeTag& tag) override {
    InProcessTransport::exchange(moves, tag);
    if (tag.direction == Direction::kBackward && tag.consumer == 1) {
      const std::lock_guard<std::mutex> lock(mutex_);
      backward_done_ = true;
      changed_.notify_all();
    }
  }
  void all_reduce(const std::vector<int>& devices, const std::vector<std::vector<float>*>& buffers,
                  const std::vector<ReduceSegment>& segments) override {
    if (std::this_thread::get_id() != main_) on_other_thread_ = true;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      if (!held_one_) {
        held_one_ = true;
        overlapped_ = changed_.wait_for(lock, std::chrono::seconds(10), [this] { return backward_done_; });
      }
    }
    InProcessTransport::all_reduce(devices, buffers, segments);
  }

  bool overlapped() const { return overlapped_; }
  bool on_other_thread() const { return on_other_thread_; }

 private:
  const std::thread::id main_ = std::this_thread::get_id();
  std::mutex mutex_;
  std::condition_variable changed_;
  bool backward_done_ = false, held_one_ = false, overlapped_ = false;
  std::atomic<bool> on_other_thread_ = false;
};

TEST(ExecutorOverlap, ABucketIsReducedWhileTheBackwardGoesOn) {
  const ModelGraph graph = lenet5(4);
  const auto kernels = make_kernels("reference");
  HoldingTransport transport;
  ExecutorOptions options = sgd_with_buckets(64);  // buckets due after each layer's backward
  options.overlap = true;
  Executor executor(graph, data_parallel(graph, 2), *kernels, transport, options);
  const Batch batch = test_batches(graph, 1).front();
  executor.step(batch.images, batch.labels);
  EXPECT_TRUE(transport.overlapped());
  EXPECT_TRUE(transport.on_other_thread());
}

// A transport that reduces only on the calling thread (the default).
class BlockingOnlyTransport : public InProcessTransport {
 public:
  bool reduces_concurrently() const override { return false; }
};

TEST(ExecutorOverlap, NeedsATransportThatReducesConcurrently) {
  const ModelGraph graph = lenet5(4);
  const auto kernels = make_kernels("reference");
  BlockingOnlyTransport transport;
  ExecutorOptions options;
  options.overlap = true;
  try {
    Executor executor(graph, data_parallel(graph, 2), *kernels, transport, options);
    FAIL() << "overlap over a blocking-only transport was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("overlap needs a transport"), std::string::npos) << e.what();
  }
  options.overlap = false;
  EXPECT_NO_THROW(Executor(graph, data_parallel(graph, 2), *kernels, transport, options));
}

}  // namespace
}  // namespace layerplan::testing
