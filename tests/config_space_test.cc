// Specification of planner/config_space.h: which degree vectors and device placements the
// search is allowed to consider for a layer.
//
// Counting rule used below: on D = 2^k devices, a layer with m splittable dimensions whose
// extents are all large powers of two has one candidate per way of writing at most k
// doublings over m dimensions, i.e. the number of (e_1..e_m) >= 0 with Σ e_i <= k,
// which is C(k+m, m) = Σ_{j<=k} C(j+m-1, m-1). For m = 4: 1, 5, 15, 35, 70.
#include "planner/config_space.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <ostream>
#include <set>
#include <vector>

#include "common/error.h"
#include "planner/geometry.h"
#include "planner/model_graph.h"

namespace layerplan {
void PrintTo(const Degrees& d, std::ostream* os) { *os << d.str(); }
void PrintTo(const Configuration& c, std::ostream* os) { *os << c.str(); }
}  // namespace layerplan

namespace {

using layerplan::Configuration;
using layerplan::Degrees;
using layerplan::Layer;
using layerplan::LayerKind;
using layerplan::ModelGraph;
using layerplan::PlacementRule;
using layerplan::Shape;
using layerplan::SpaceOptions;
using layerplan::UsageError;
using layerplan::Window;
using layerplan::candidate_degrees;
using layerplan::enumerate_configurations;
using layerplan::is_power_of_two;
using layerplan::kNumDims;
using layerplan::splittable_dims;
using ::testing::ElementsAre;
using ::testing::UnorderedElementsAre;

constexpr SpaceOptions kFirst{PlacementRule::kFirstBlock};
constexpr SpaceOptions kAligned{PlacementRule::kAlignedBlocks};

Shape shape(int64_t n, int64_t c, int64_t h, int64_t w) { return Shape{{n, c, h, w}}; }
Degrees degrees(int n, int c, int h, int w) { return Degrees{{n, c, h, w}}; }

// A graph with one layer of every kind worth enumerating, all on large power-of-two
// extents (64 samples, 64+ channels, 64x64 maps), so divisibility never prunes.
struct BigModel {
  ModelGraph g{"big"};
  int input = g.input("x", shape(64, 64, 64, 64));
  int conv = g.conv2d("conv", input, 64, Window::square(3, 1, 1), true);  // 64x64x64x64
  int fc = g.fully_connected("fc", conv, 1024);                            // 64x1024x1x1
  int softmax = g.softmax_cross_entropy("softmax", fc);                    // 64x1024x1x1
  int flatten = g.flatten("flatten", conv);                                // 64x262144x1x1
  int concat = g.concat("concat", {input, conv});                          // 64x128x64x64
  const Layer& layer(int id) const { return g.layer(id); }
};

std::vector<size_t> counts_on_1_to_16(const Layer& layer) {
  std::vector<size_t> out;
  for (int devices : {1, 2, 4, 8, 16}) out.push_back(candidate_degrees(layer, devices).size());
  return out;
}

std::array<int, kNumDims> as_array(const Degrees& d) { return d.d; }

// ---------------------------------------------------------------------------------------
// How many degree vectors
// ---------------------------------------------------------------------------------------

TEST(CandidateDegrees, ConvWithLargeExtentsHasOneCandidatePerWayToSpreadTheDoublings) {
  // Four splittable dimensions: C(k+4, 4) = 1, 5, 15, 35, 70 for k = 0..4.
  const BigModel m;
  EXPECT_THAT(counts_on_1_to_16(m.layer(m.conv)), ElementsAre(1, 5, 15, 35, 70));
}

TEST(CandidateDegrees, FullyConnectedSplitsSamplesAndOutputFeatures) {
  // Two splittable dimensions (n, c): C(k+2, 2) = 1, 3, 6, 10, 15.
  const BigModel m;
  EXPECT_THAT(counts_on_1_to_16(m.layer(m.fc)), ElementsAre(1, 3, 6, 10, 15));
}

TEST(CandidateDegrees, SoftmaxSplitsSamplesOnly) {
  // One splittable dimension: n1, n2, ..., n(2^k): k + 1 = 1, 2, 3, 4, 5.
  const BigModel m;
  EXPECT_THAT(counts_on_1_to_16(m.layer(m.softmax)), ElementsAre(1, 2, 3, 4, 5));
}

TEST(CandidateDegrees, FullyConnectedOnFourDevicesAreExactlyTheSixSplits) {
  const BigModel m;
  const auto got = candidate_degrees(m.layer(m.fc), 4);
  EXPECT_THAT(got, UnorderedElementsAre(degrees(1, 1, 1, 1), degrees(2, 1, 1, 1), degrees(1, 2, 1, 1),
                                        degrees(4, 1, 1, 1), degrees(2, 2, 1, 1), degrees(1, 4, 1, 1)));
}

TEST(CandidateDegrees, AreDistinctPowersOfTwoOrderedByTileCount) {
  const BigModel m;
  const auto got = candidate_degrees(m.layer(m.conv), 16);
  std::set<std::array<int, kNumDims>> seen;
  for (size_t i = 0; i < got.size(); ++i) {
    SCOPED_TRACE(got[i].str());
    EXPECT_TRUE(seen.insert(as_array(got[i])).second) << "duplicate";
    for (int d = 0; d < kNumDims; ++d) EXPECT_TRUE(is_power_of_two(got[i][d]));
    EXPECT_LE(got[i].product(), 16);
    if (i > 0) {
      EXPECT_LE(got[i - 1].product(), got[i].product());
    }
  }
  EXPECT_EQ(got.front(), degrees(1, 1, 1, 1));
}

// ---------------------------------------------------------------------------------------
// Divisibility
// ---------------------------------------------------------------------------------------

TEST(CandidateDegrees, SevenBySevenMapIsNeverSplitAlongHeightOrWidth) {
  // 8x512x7x7 on 16 devices: 7 is odd, so only n (<= 8 samples) and c are split:
  // pairs (a, b) with a + b <= 4 and a <= 3: 15 minus (4, 0) = 14.
  ModelGraph g("7x7");
  const int x = g.input("x", shape(8, 512, 7, 7));
  const Layer& conv = g.layer(g.conv2d("conv", x, 512, Window::square(3, 1, 1), false));
  const auto got = candidate_degrees(conv, 16);
  EXPECT_EQ(got.size(), 14u);
  for (const Degrees& d : got) {
    EXPECT_EQ(d[2], 1) << d.str();
    EXPECT_EQ(d[3], 1) << d.str();
    EXPECT_LE(d[0], 8) << d.str();
  }
}

TEST(CandidateDegrees, ThreeChannelsCannotBeSplitSixOnlyInTwo) {
  ModelGraph g("rgb");
  const int rgb = g.input("rgb", shape(8, 3, 32, 32));
  const int six = g.input("six", shape(8, 6, 32, 32));
  const int relu3_id = g.relu("relu3", rgb);
  const int relu6_id = g.relu("relu6", six);
  for (const Degrees& d : candidate_degrees(g.layer(relu3_id), 8)) EXPECT_EQ(d[1], 1) << d.str();
  std::set<int> channel_degrees;
  for (const Degrees& d : candidate_degrees(g.layer(relu6_id), 8)) channel_degrees.insert(d[1]);
  EXPECT_EQ(channel_degrees, (std::set<int>{1, 2}));
}

// ---------------------------------------------------------------------------------------
// Splittable dimensions per kind
// ---------------------------------------------------------------------------------------

TEST(SplittableDims, FollowWhatEachKindCanComputeIndependently) {
  using A = std::array<bool, kNumDims>;  // n, c, h, w
  const A all{true, true, true, true};
  EXPECT_EQ(splittable_dims(LayerKind::kConv2d), all);
  EXPECT_EQ(splittable_dims(LayerKind::kMaxPool), all);
  EXPECT_EQ(splittable_dims(LayerKind::kAvgPool), all);
  EXPECT_EQ(splittable_dims(LayerKind::kRelu), all);
  EXPECT_EQ(splittable_dims(LayerKind::kBatchNorm), all);
  EXPECT_EQ(splittable_dims(LayerKind::kDropout), all);
  EXPECT_EQ(splittable_dims(LayerKind::kAdd), all);
  EXPECT_EQ(splittable_dims(LayerKind::kFullyConnected), (A{true, true, false, false}));
  EXPECT_EQ(splittable_dims(LayerKind::kGlobalAvgPool), (A{true, true, false, false}));
  EXPECT_EQ(splittable_dims(LayerKind::kSoftmaxCrossEntropy), (A{true, false, false, false}));
  EXPECT_EQ(splittable_dims(LayerKind::kFlatten), (A{true, false, false, false}));
  EXPECT_EQ(splittable_dims(LayerKind::kConcat), (A{true, false, true, true}));
  EXPECT_EQ(splittable_dims(LayerKind::kInput), (A{true, false, true, true}));
}

TEST(CandidateDegrees, FlattenIsSplitBySamplesOnly) {
  const BigModel m;
  const auto got = candidate_degrees(m.layer(m.flatten), 16);
  EXPECT_THAT(got, ElementsAre(degrees(1, 1, 1, 1), degrees(2, 1, 1, 1), degrees(4, 1, 1, 1),
                               degrees(8, 1, 1, 1), degrees(16, 1, 1, 1)));
}

TEST(CandidateDegrees, ConcatAndInputNeverSplitChannels) {
  // Three splittable dimensions (n, h, w) on 16 devices: C(4+3, 3) = 35.
  const BigModel m;
  for (int id : {m.concat, m.input}) {
    const auto got = candidate_degrees(m.layer(id), 16);
    EXPECT_EQ(got.size(), 35u) << m.layer(id).name;
    for (const Degrees& d : got) EXPECT_EQ(d[1], 1) << m.layer(id).name << " " << d.str();
  }
}

// ---------------------------------------------------------------------------------------
// Placement
// ---------------------------------------------------------------------------------------

TEST(EnumerateConfigurations, FirstBlockPutsTileTOnDeviceT) {
  const BigModel m;
  const auto configs = enumerate_configurations(m.layer(m.softmax), 4, 2, kFirst);
  EXPECT_THAT(configs, ElementsAre(Configuration{degrees(1, 1, 1, 1), {0}},
                                   Configuration{degrees(2, 1, 1, 1), {0, 1}},
                                   Configuration{degrees(4, 1, 1, 1), {0, 1, 2, 3}}));
  // And for a layer with many candidates: one configuration per degree vector, on 0..p-1.
  const auto conv = enumerate_configurations(m.layer(m.conv), 16, 4, kFirst);
  EXPECT_EQ(conv.size(), 70u);
  for (const Configuration& c : conv) {
    std::vector<int> first(static_cast<size_t>(c.degrees.product()));
    for (size_t i = 0; i < first.size(); ++i) first[i] = static_cast<int>(i);
    EXPECT_EQ(c.devices, first) << c.str();
  }
}

TEST(EnumerateConfigurations, AlignedBlocksTryEveryAlignedBlockOfDevices) {
  // Softmax on 4 devices: n1 on any one of 4, n2 on {0,1} or {2,3}, n4 on all: 7.
  const BigModel m;
  EXPECT_THAT(enumerate_configurations(m.layer(m.softmax), 4, 2, kAligned),
              UnorderedElementsAre(Configuration{degrees(1, 1, 1, 1), {0}}, Configuration{degrees(1, 1, 1, 1), {1}},
                                   Configuration{degrees(1, 1, 1, 1), {2}}, Configuration{degrees(1, 1, 1, 1), {3}},
                                   Configuration{degrees(2, 1, 1, 1), {0, 1}},
                                   Configuration{degrees(2, 1, 1, 1), {2, 3}},
                                   Configuration{degrees(4, 1, 1, 1), {0, 1, 2, 3}}));
}

TEST(EnumerateConfigurations, AlignedBlockCountIsSumOfDevicesOverTileCount) {
  // Conv on 16 devices: C(j+3, 3) candidates have 2^j tiles (1, 4, 10, 20, 35 for
  // j = 0..4), each placed on 16 / 2^j blocks: 16 + 32 + 40 + 40 + 35 = 163.
  const BigModel m;
  const Layer& conv = m.layer(m.conv);
  const auto configs = enumerate_configurations(conv, 16, 4, kAligned);
  EXPECT_EQ(configs.size(), 163u);
  size_t expected = 0;
  for (const Degrees& d : candidate_degrees(conv, 16)) expected += static_cast<size_t>(16 / d.product());
  EXPECT_EQ(configs.size(), expected);
}

TEST(EnumerateConfigurations, BlocksNoLargerThanANodeStayInsideOneNode) {
  // 16 devices, 4 per node (node of device d is d / 4). A block of p <= 4 consecutive
  // devices starting at a multiple of p never straddles a node boundary; a larger block
  // is a run of whole nodes.
  const BigModel m;
  constexpr int kPerNode = 4;
  const auto configs = enumerate_configurations(m.layer(m.conv), 16, kPerNode, kAligned);
  std::set<std::vector<int>> blocks;
  for (const Configuration& c : configs) {
    SCOPED_TRACE(c.str());
    const int p = c.tiles();
    ASSERT_EQ(p, c.degrees.product());
    EXPECT_EQ(c.devices.front() % p, 0);  // aligned
    for (int t = 1; t < p; ++t) EXPECT_EQ(c.devices[static_cast<size_t>(t)], c.devices.front() + t);
    if (p <= kPerNode) {
      for (int dev : c.devices) EXPECT_EQ(dev / kPerNode, c.devices.front() / kPerNode);
    } else {
      EXPECT_EQ(c.devices.front() % kPerNode, 0);
      EXPECT_EQ(p % kPerNode, 0);
    }
    blocks.insert(c.devices);
  }
  // Every aligned block of every size 1, 2, 4, 8, 16 appears: 16 + 8 + 4 + 2 + 1 = 31.
  EXPECT_EQ(blocks.size(), 31u);
}

// ---------------------------------------------------------------------------------------
// Usage errors
// ---------------------------------------------------------------------------------------

TEST(EnumerateConfigurations, RejectsDeviceCountsThatAreNotPowersOfTwo) {
  const BigModel m;
  const Layer& conv = m.layer(m.conv);
  EXPECT_THROW(enumerate_configurations(conv, 6, 2, kFirst), UsageError);
  EXPECT_THROW(enumerate_configurations(conv, 12, 4, kAligned), UsageError);
  EXPECT_THROW(enumerate_configurations(conv, 0, 1, kFirst), UsageError);
  EXPECT_NO_THROW(enumerate_configurations(conv, 16, 4, kFirst));
  EXPECT_NO_THROW(enumerate_configurations(conv, 1, 1, kFirst));
}

TEST(EnumerateConfigurations, RejectsGpusPerNodeThatAreNotPowersOfTwo) {
  const BigModel m;
  const Layer& conv = m.layer(m.conv);
  EXPECT_THROW(enumerate_configurations(conv, 8, 3, kFirst), UsageError);
  EXPECT_THROW(enumerate_configurations(conv, 8, 6, kAligned), UsageError);
  EXPECT_THROW(enumerate_configurations(conv, 8, 0, kFirst), UsageError);
}

TEST(IsPowerOfTwo, AcceptsOneTwoFourRejectsZeroNegativeAndOthers) {
  for (int64_t v : {1, 2, 4, 8, 1024}) EXPECT_TRUE(is_power_of_two(v)) << v;
  for (int64_t v : {0, -2, 3, 6, 12, 1023}) EXPECT_FALSE(is_power_of_two(v)) << v;
}

}  // namespace
