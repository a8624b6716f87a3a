// BatchPrefetcher (runtime/training/batch_prefetcher.h): batches come out in order and equal
// to assemble_batch's whatever the number of loader threads, only the rank's positions are
// asked for, no more than `depth` batches are made ahead, and a loader's error reaches next().
#include "runtime/training/batch_prefetcher.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

#include "common/error.h"

namespace layerplan {
namespace {

// Sample i of epoch e is filled with i + 1000 e; sample `poison` throws a UsageError.
class CountingSource : public SampleSource {
 public:
  explicit CountingSource(int64_t samples, int64_t poison = -1) : samples_(samples), poison_(poison) {}
  int64_t samples() const override { return samples_; }
  int64_t label(int64_t index) const override { return index % 10; }
  void image(int64_t index, int epoch, float* out) const override {
    if (index == poison_) throw UsageError("sample " + std::to_string(index) + " is bad");
    ++calls;
    for (int i = 0; i < 4; ++i) out[i] = static_cast<float>(index + 1000 * epoch);
  }
  mutable std::atomic<int> calls{0};

 private:
  int64_t samples_, poison_;
};

const Shape kInput{{8, 1, 2, 2}};

TEST(BatchPrefetcher, GivesAssembleBatchsBatchesInOrderWithAnyThreadCount) {
  const CountingSource source(64);
  const EpochOrder order(64, 8, true, 5, 2);
  for (int threads : {0, 1, 3}) {
    BatchPrefetcher batches(source, order, 2, 1, 8, kInput, {{0, 8}}, {.threads = threads, .depth = 2});
    for (int64_t b = 1; b < 8; ++b) {
      const GlobalBatch got = batches.next();
      const GlobalBatch want = assemble_batch(source, order, 2, b, kInput, {{0, 8}});
      EXPECT_EQ(got.labels, want.labels) << threads << " threads, batch " << b;
      EXPECT_EQ(got.images.values(), want.images.values()) << threads << " threads, batch " << b;
    }
  }
}

TEST(BatchPrefetcher, AsksOnlyForTheRanksPositionsAndStaysWithinItsDepth) {
  const CountingSource source(64);
  const EpochOrder order(64, 8, false, 0, 0);
  {
    BatchPrefetcher batches(source, order, 0, 0, 8, kInput, {{2, 5}}, {.threads = 2, .depth = 3});
    const GlobalBatch first = batches.next();
    // Positions 2..4 filled (lane n starts at sample 8 n), the others zero.
    EXPECT_EQ(first.images.values()[0], 0.0f);
    EXPECT_EQ(first.images.values()[2 * 4], 16.0f);
    EXPECT_EQ(first.images.values()[5 * 4], 0.0f);
    // Taken 1: at most 1 + 3 batches made, 3 images each.
    for (int i = 0; i < 200 && source.calls < 12; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    EXPECT_LE(source.calls.load(), 12);
  }  // stopping with batches left
  EXPECT_EQ(source.calls.load() % 3, 0);
}

TEST(BatchPrefetcher, ALoaderThreadsErrorIsRaisedByNext) {
  const CountingSource source(64, 8 * 3 + 1);  // lane 3's second sample: batch 1 in file order
  const EpochOrder order(64, 8, false, 0, 0);
  BatchPrefetcher batches(source, order, 0, 0, 8, kInput, {{0, 8}}, {.threads = 2, .depth = 4});
  bool thrown = false;
  try {
    for (int b = 0; b < 8; ++b) batches.next();
  } catch (const UsageError& e) {
    thrown = true;
    EXPECT_STREQ(e.what(), "sample 25 is bad");
  }
  EXPECT_TRUE(thrown);
}

}  // namespace
}  // namespace layerplan
