// Where `layerplan train` gets its samples (runtime/training/train_data.h): the lanes that let each
// rank read only its share, the epoch order every rank agrees on, and --normalize.
// The data are small IDX files written here (plain bytes: the reader takes plain or gzip).
#include "runtime/training/train_data.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <set>
#include <stdexcept>

#include "common/error.h"
#include "tests/scratch_dir.h"

namespace layerplan {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kSide = 28;

void put_u32(std::ofstream& out, uint32_t v) {
  const char bytes[4] = {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
                         static_cast<char>(v)};
  out.write(bytes, 4);
}

// The pixel (y, x) of image i: tells the image apart (pixel (0, 0) is i) and varies.
uint8_t pixel(int64_t i, int64_t y, int64_t x) {
  return y == 0 && x == 0 ? static_cast<uint8_t>(i) : static_cast<uint8_t>((i * 31 + y * 7 + x * 3) % 256);
}

// One split of Fashion-MNIST's four files, as IDX: `samples` 28x28 images made by `value`,
// labels i % 10 (or `label` for all when given).
void write_split(const ScratchDir& dir, const std::string& prefix, int64_t samples,
                 uint8_t (*value)(int64_t, int64_t, int64_t), int64_t label = -1) {
  std::ofstream images(dir.file(prefix + "-images-idx3-ubyte.gz"), std::ios::binary);
  put_u32(images, 0x803);
  put_u32(images, static_cast<uint32_t>(samples));
  put_u32(images, kSide);
  put_u32(images, kSide);
  for (int64_t i = 0; i < samples; ++i) {
    for (int64_t y = 0; y < kSide; ++y) {
      for (int64_t x = 0; x < kSide; ++x) images.put(static_cast<char>(value(i, y, x)));
    }
  }
  std::ofstream labels(dir.file(prefix + "-labels-idx1-ubyte.gz"), std::ios::binary);
  put_u32(labels, 0x801);
  put_u32(labels, static_cast<uint32_t>(samples));
  for (int64_t i = 0; i < samples; ++i) labels.put(static_cast<char>(label >= 0 ? label : i % 10));
}

// Points LAYERPLAN_FASHION_MNIST_DIR at `dir` for the lifetime of the object.
class FashionMnistAt {
 public:
  explicit FashionMnistAt(const ScratchDir& dir) { ::setenv("LAYERPLAN_FASHION_MNIST_DIR", dir.path().c_str(), 1); }
  ~FashionMnistAt() { ::unsetenv("LAYERPLAN_FASHION_MNIST_DIR"); }
};

const Shape kInput{{8, 1, 32, 32}};  // LeNet-5's input at batch 8

// A Fashion-MNIST of `train` and `test` samples made by pixel(), loaded for LeNet-5 at
// batch 8 by a rank whose input tiles cover `positions`.
struct SmallFashionMnist {
  SmallFashionMnist(int64_t train, int64_t test, std::vector<Interval> positions, bool normalize = false) {
    write_split(dir, "train", train, pixel);
    write_split(dir, "t10k", test, pixel);
    FashionMnistAt at(dir);
    DataOptions options;
    options.positions = std::move(positions);
    options.normalize = normalize;
    data = load_training_data("fashion-mnist", kInput, 10, options);
  }
  ScratchDir dir;
  TrainingData data;
};

// Image `index` of a source, as the model sees it (1x32x32).
std::vector<float> image_of(const SampleSource& source, int64_t index) {
  std::vector<float> out(32 * 32);
  source.image(index, 0, out.data());
  return out;
}

TEST(EpochOrder, EachLaneVisitsItsOwnSamplesOnceAnEpoch) {
  // 43 samples, batches of 8: 8 lanes of 5 (samples 40-42 are never used).
  for (bool shuffle : {false, true}) {
    const EpochOrder order(43, 8, shuffle, 7, 2);
    ASSERT_EQ(order.batches(), 5);
    std::set<int64_t> all;
    for (int64_t n = 0; n < 8; ++n) {
      std::set<int64_t> lane;
      for (int64_t b = 0; b < order.batches(); ++b) {
        const int64_t s = order.sample(b, n);
        if (!shuffle) {
          EXPECT_EQ(s, n * 5 + b);
        }
        lane.insert(s);
      }
      EXPECT_EQ(lane, (std::set<int64_t>{n * 5, n * 5 + 1, n * 5 + 2, n * 5 + 3, n * 5 + 4})) << "lane " << n;
      all.insert(lane.begin(), lane.end());
    }
    EXPECT_EQ(all.size(), 40u);
  }
}

TEST(EpochOrder, SameSeedAndEpochGiveTheSameOrderAnotherEpochAnother) {
  const auto order_of = [](uint64_t seed, int epoch) {
    const EpochOrder order(800, 8, true, seed, epoch);
    std::vector<int64_t> v;
    for (int64_t b = 0; b < order.batches(); ++b) {
      for (int64_t n = 0; n < 8; ++n) v.push_back(order.sample(b, n));
    }
    return v;
  };
  // Every rank builds its own EpochOrder: they agree because it is a function of its arguments.
  EXPECT_EQ(order_of(1, 0), order_of(1, 0));
  EXPECT_NE(order_of(1, 0), order_of(1, 1));
  EXPECT_NE(order_of(1, 0), order_of(2, 0));
}

TEST(TrainingData, ARankLoadsOnlyTheLanesOfItsBatchPositions) {
  // Batch positions 2 and 3: lanes of 5 samples, 10-19.
  const SmallFashionMnist small(43, 16, {{2, 4}});
  const TrainingData& data = small.data;
  ASSERT_TRUE(data.train && data.test);
  EXPECT_EQ(data.train->samples(), 43);
  EXPECT_EQ(data.test->samples(), 16);
  for (int64_t i = 0; i < 43; ++i) EXPECT_EQ(data.train->label(i), i % 10);  // every label
  for (int64_t i = 10; i < 20; ++i) {
    const std::vector<float> image = image_of(*data.train, i);
    // 28x28 zero-padded by 2 to 32x32, pixels scaled to [0, 1].
    EXPECT_EQ(image[0], 0.0f);
    EXPECT_FLOAT_EQ(image[2 * 32 + 2], static_cast<float>(i) / 255.0f) << "sample " << i;
    EXPECT_FLOAT_EQ(image[(2 + 5) * 32 + 2 + 9], pixel(i, 5, 9) / 255.0f) << "sample " << i;
  }
  for (int64_t i : {0, 9, 20, 42}) EXPECT_THROW(image_of(*data.train, i), std::logic_error) << "sample " << i;
  // The test split has lanes of 16 / 8 = 2: positions 2 and 3 hold samples 4-7.
  for (int64_t i = 4; i < 8; ++i) EXPECT_NO_THROW(image_of(*data.test, i));
  EXPECT_THROW(image_of(*data.test, 3), std::logic_error);
  EXPECT_THROW(image_of(*data.test, 8), std::logic_error);
}

TEST(TrainingData, OverlappingAndAbuttingPositionsLoadEachLaneOnce) {
  const SmallFashionMnist small(40, 8, {{5, 7}, {0, 2}, {1, 3}, {7, 8}});
  const TrainingData& data = small.data;
  for (int64_t i = 0; i < 40; ++i) {
    const bool loaded = i < 15 || i >= 25;  // lanes 0-2 and 5-7
    if (loaded) {
      EXPECT_FLOAT_EQ(image_of(*data.train, i)[2 * 32 + 2], static_cast<float>(i) / 255.0f);
    } else {
      EXPECT_THROW(image_of(*data.train, i), std::logic_error) << "sample " << i;
    }
  }
}

TEST(TrainingData, AssembledBatchHoldsTheRanksImagesAndEveryLabel) {
  const SmallFashionMnist small(40, 8, {{4, 8}});
  const TrainingData& data = small.data;
  const EpochOrder order(40, 8, true, 3, 1);
  for (int64_t b = 0; b < order.batches(); ++b) {
    const GlobalBatch g = assemble_batch(*data.train, order, 0, b, kInput, {{4, 8}});
    ASSERT_EQ(g.labels.size(), 8u);
    for (int64_t n = 0; n < 8; ++n) {
      const int64_t s = order.sample(b, n);
      EXPECT_EQ(g.labels[static_cast<size_t>(n)], s % 10);
      const float corner = g.images.at(n, 0, 2, 2);
      EXPECT_FLOAT_EQ(corner, n >= 4 ? static_cast<float>(s) / 255.0f : 0.0f) << "batch " << b << " position " << n;
    }
  }
}

TEST(TrainingData, NormalizeStandardisesBothSplitsWithTheTrainingStatistics) {
  const SmallFashionMnist raw_data(40, 8, {{0, 8}}), normalized_data(40, 8, {{0, 8}}, true);
  const TrainingData &raw = raw_data.data, &normalized = normalized_data.data;
  EXPECT_THAT(normalized.description, HasSubstr("normalised"));
  // Over the 28x28 pixels of the whole training split: mean 0, standard deviation 1.
  double sum = 0, squares = 0, raw_sum = 0, raw_squares = 0;
  const auto inner = [](int64_t k) { return k / 32 >= 2 && k / 32 < 30 && k % 32 >= 2 && k % 32 < 30; };
  for (int64_t i = 0; i < 40; ++i) {
    const std::vector<float> a = image_of(*normalized.train, i), r = image_of(*raw.train, i);
    for (int64_t k = 0; k < 32 * 32; ++k) {
      if (!inner(k)) continue;
      sum += a[static_cast<size_t>(k)];
      squares += a[static_cast<size_t>(k)] * a[static_cast<size_t>(k)];
      raw_sum += r[static_cast<size_t>(k)];
      raw_squares += r[static_cast<size_t>(k)] * r[static_cast<size_t>(k)];
    }
  }
  const double count = 40.0 * kSide * kSide;
  EXPECT_NEAR(sum / count, 0.0, 1e-5);
  EXPECT_NEAR(squares / count, 1.0, 1e-4);
  // The test split is scaled by the same figures, not its own.
  const double mean = raw_sum / count, stddev = std::sqrt(raw_squares / count - mean * mean);
  const std::vector<float> t = image_of(*normalized.test, 5), t_raw = image_of(*raw.test, 5);
  EXPECT_NEAR(t[3 * 32 + 4], (t_raw[3 * 32 + 4] - mean) / stddev, 1e-5);
}

TEST(TrainingData, BadDataIsAUsageErrorNamingWhatIsWrong) {
  const auto message = [](const std::string& spec, const Shape& input, int64_t classes, bool normalize) {
    DataOptions options;
    options.normalize = normalize;
    options.positions = {{0, input.n()}};
    try {
      load_training_data(spec, input, classes, options);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  {
    ScratchDir dir;
    write_split(dir, "train", 40, [](int64_t, int64_t, int64_t) -> uint8_t { return 9; });
    write_split(dir, "t10k", 8, pixel);
    FashionMnistAt at(dir);
    EXPECT_THAT(message("fashion-mnist", kInput, 10, true), HasSubstr("channel 0 is constant"));
    EXPECT_EQ(message("fashion-mnist", kInput, 10, false), "no error");  // fine unnormalised
    EXPECT_THAT(message("fashion-mnist", Shape{{64, 1, 32, 32}}, 10, false),
                HasSubstr("has 40 samples, fewer than one batch of 64"));
    EXPECT_THAT(message("fashion-mnist", Shape{{8, 3, 32, 32}}, 10, false), HasSubstr("the model takes 3x32x32"));
  }
  {
    ScratchDir dir;
    write_split(dir, "train", 40, pixel, 12);
    write_split(dir, "t10k", 8, pixel);
    FashionMnistAt at(dir);
    EXPECT_THAT(message("fashion-mnist", kInput, 10, false), HasSubstr("has label 12, the model has 10 classes"));
  }
  {
    ScratchDir dir;  // no files at all
    FashionMnistAt at(dir);
    EXPECT_THAT(message("fashion-mnist", kInput, 10, false), HasSubstr(dir.path().string()));
  }
}

}  // namespace
}  // namespace layerplan
