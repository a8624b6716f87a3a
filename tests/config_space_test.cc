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
#include <string>
#include <utility>
#include <vector>

#include "common/error.h"
#include "model/geometry.h"
#include "model/model_graph.h"

namespace layerplan {
void PrintTo(const Degrees& d, std::ostream* os) { *os << d.str(); }
void PrintTo(const Configuration& c, std::ostream* os) { *os << c.str(); }
}  // namespace layerplan

namespace {

using layerplan::candidate_degrees;
using layerplan::Configuration;
using layerplan::Degrees;
using layerplan::enumerate_configurations;
using layerplan::is_power_of_two;
using layerplan::kNumDims;
using layerplan::Layer;
using layerplan::LayerKind;
using layerplan::ModelGraph;
using layerplan::NodeRuns;
using layerplan::PlacementRule;
using layerplan::Shape;
using layerplan::SpaceOptions;
using layerplan::splittable_dims;
using layerplan::UsageError;
using layerplan::Window;
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
  int fc = g.fully_connected("fc", conv, 1024);                           // 64x1024x1x1
  int softmax = g.softmax_cross_entropy("softmax", fc);                   // 64x1024x1x1
  int flatten = g.flatten("flatten", conv);                               // 64x262144x1x1
  int concat = g.concat("concat", {input, conv});                         // 64x128x64x64
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
  EXPECT_THAT(got, ElementsAre(degrees(1, 1, 1, 1), degrees(2, 1, 1, 1), degrees(4, 1, 1, 1), degrees(8, 1, 1, 1),
                               degrees(16, 1, 1, 1)));
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
  EXPECT_THAT(configs, ElementsAre(Configuration{degrees(1, 1, 1, 1), {0}}, Configuration{degrees(2, 1, 1, 1), {0, 1}},
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
  EXPECT_THAT(
      enumerate_configurations(m.layer(m.softmax), 4, 2, kAligned),
      UnorderedElementsAre(Configuration{degrees(1, 1, 1, 1), {0}}, Configuration{degrees(1, 1, 1, 1), {1}},
                           Configuration{degrees(1, 1, 1, 1), {2}}, Configuration{degrees(1, 1, 1, 1), {3}},
                           Configuration{degrees(2, 1, 1, 1), {0, 1}}, Configuration{degrees(2, 1, 1, 1), {2, 3}},
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
// Any job shape: N nodes x G GPUs
// ---------------------------------------------------------------------------------------

// The enumeration as it was when D and G had to be powers of two: degrees doubling while
// they divide the extent and the product stays <= D, ordered by tile count (stable), on
// every aligned block of p devices for kAlignedBlocks.
std::vector<Configuration> power_of_two_enumeration(const Layer& layer, int device_count, const SpaceOptions& options) {
  const auto dims = splittable_dims(layer.kind);
  std::vector<Degrees> degrees_list;
  auto extend = [&](auto&& self, int dim, Degrees current) -> void {
    if (dim == kNumDims) {
      degrees_list.push_back(current);
      return;
    }
    const int others = current.product();
    for (int degree = 1; others * degree <= device_count; degree *= 2) {
      if (degree > 1 && (!dims[static_cast<size_t>(dim)] || layer.output[dim] % degree != 0)) break;
      current.d[static_cast<size_t>(dim)] = degree;
      self(self, dim + 1, current);
    }
  };
  extend(extend, 0, Degrees{});
  std::stable_sort(degrees_list.begin(), degrees_list.end(),
                   [](const Degrees& a, const Degrees& b) { return a.product() < b.product(); });
  std::vector<Configuration> out;
  for (const Degrees& d : degrees_list) {
    const int p = d.product();
    const int blocks = options.placement == PlacementRule::kFirstBlock ? 1 : device_count / p;
    for (int block = 0; block < blocks; ++block) {
      Configuration c{d, {}};
      for (int t = 0; t < p; ++t) c.devices.push_back(block * p + t);
      out.push_back(c);
    }
  }
  return out;
}

// Layers whose extents powers of two divide well (BigModel), poorly (7x7, 3 channels,
// 1000 classes) and that 3 divides (which must not add anything when D and G are powers
// of two).
struct MixedModel {
  ModelGraph g{"mixed"};
  int input = g.input("x", shape(576, 3, 224, 224));
  int conv = g.conv2d("conv", input, 96, Window::square(7, 2, 3), false);  // 576x96x112x112
  int pool = g.max_pool("pool", conv, Window::square(3, 2, 1));            // 576x96x56x56
  int small = g.conv2d("small", pool, 12, Window::square(3, 8, 1), true);  // 576x12x7x7
  int fc = g.fully_connected("fc", small, 1000);                           // 576x1000x1x1
  int softmax = g.softmax_cross_entropy("softmax", fc);
  int concat = g.concat("concat", {pool, pool});  // 576x192x56x56
};

TEST(EnumerateConfigurations, PowerOfTwoJobsGiveExactlyThePowerOfTwoSpace) {
  const BigModel big;
  const MixedModel mixed;
  std::vector<const Layer*> layers;
  for (const Layer& l : big.g.layers()) layers.push_back(&l);
  for (const Layer& l : mixed.g.layers()) layers.push_back(&l);
  int compared = 0;
  for (int devices = 1; devices <= 256; devices *= 2) {
    for (int per_node = 1; per_node <= devices && per_node <= 16; per_node *= 2) {
      for (const SpaceOptions& options : {kFirst, kAligned}) {
        for (const Layer* l : layers) {
          SCOPED_TRACE(l->name + " on " + std::to_string(devices) + " GPUs, " + std::to_string(per_node) + " per node");
          // Same configurations, in the same order.
          ASSERT_EQ(enumerate_configurations(*l, devices, per_node, options),
                    power_of_two_enumeration(*l, devices, options));
          ++compared;
        }
      }
    }
  }
  EXPECT_EQ(compared, 2 * 35 * 13);  // 35 (D, G) pairs, 13 layers, both rules
}

TEST(PlaceableTileCount, DivisorsOfANodeOrMultiplesOfANodeThatDivideTheJob) {
  auto placeable = [](int devices, int per_node) {
    std::vector<int> out;
    for (int p = 1; p <= devices + 1; ++p) {
      if (layerplan::placeable_tile_count(p, devices, per_node)) out.push_back(p);
    }
    return out;
  };
  EXPECT_THAT(placeable(12, 4), ElementsAre(1, 2, 4, 12));             // 3 nodes x 4: no 3, 6 or 8
  EXPECT_THAT(placeable(6, 6), ElementsAre(1, 2, 3, 6));               // 1 node x 6
  EXPECT_THAT(placeable(3, 1), ElementsAre(1, 3));                     // 3 nodes x 1: no 2
  EXPECT_THAT(placeable(12, 6), ElementsAre(1, 2, 3, 6, 12));          // 2 nodes x 6
  EXPECT_THAT(placeable(48, 8), ElementsAre(1, 2, 4, 8, 16, 24, 48));  // 6 nodes x 8
  EXPECT_THAT(placeable(18, 3), ElementsAre(1, 3, 6, 9, 18));          // 6 nodes x 3: no 2
  EXPECT_THAT(placeable(16, 4), ElementsAre(1, 2, 4, 8, 16));
  EXPECT_THAT(placeable(5, 5), ElementsAre(1, 5));
  EXPECT_FALSE(layerplan::placeable_tile_count(4, 10, 4));  // not a whole number of nodes
  EXPECT_FALSE(layerplan::placeable_tile_count(0, 4, 4));
}

// Rule 6: above 256 GPUs (by default) a layer on a run of some but not all nodes splits
// across them by samples only; one node's GPUs and the whole job keep every split; up to
// 256, and with NodeRuns::kAnySplit, every placeable count and split.
TEST(AllowedDegrees, AboveTwoHundredFiftySixGpusRunsOfNodesSplitBySamples) {
  auto allowed = [](Degrees d, int devices, int per_node, NodeRuns runs) {
    return layerplan::allowed_degrees(d, devices, per_node, SpaceOptions{PlacementRule::kFirstBlock, runs});
  };
  EXPECT_TRUE(allowed(Degrees{{64, 8, 1, 1}}, 1024, 8, NodeRuns::kAuto));    // 512: c8 inside a node
  EXPECT_TRUE(allowed(Degrees{{64, 4, 1, 2}}, 1024, 8, NodeRuns::kAuto));    // 512: c4 w2
  EXPECT_FALSE(allowed(Degrees{{32, 16, 1, 1}}, 1024, 8, NodeRuns::kAuto));  // 512: c16 spans nodes
  EXPECT_TRUE(allowed(Degrees{{32, 16, 1, 1}}, 1024, 8, NodeRuns::kAnySplit));
  EXPECT_TRUE(allowed(Degrees{{1, 1024, 1, 1}}, 1024, 8, NodeRuns::kAuto));  // the whole job
  EXPECT_TRUE(allowed(Degrees{{1, 2, 2, 2}}, 1024, 8, NodeRuns::kAuto));     // one node
  EXPECT_TRUE(allowed(Degrees{{1, 16, 1, 1}}, 256, 8, NodeRuns::kAuto));     // up to 256: any
  EXPECT_FALSE(allowed(Degrees{{1, 16, 1, 1}}, 32, 8, NodeRuns::kBySamples));
  EXPECT_TRUE(allowed(Degrees{{2, 8, 1, 1}}, 32, 8, NodeRuns::kBySamples));
  EXPECT_FALSE(allowed(Degrees{{3, 1, 1, 1}}, 12, 4, NodeRuns::kAuto));  // not placeable (rule 3)
}

TEST(EnumerateConfigurations, ConvOn1024GpusSplitsRunsOfNodesBySamplesOnly) {
  ModelGraph g("conv");
  const int x = g.input("x", shape(1024, 64, 56, 56));
  const int conv = g.conv2d("conv", x, 64, Window::square(3, 1, 1), false);
  const auto configs = enumerate_configurations(g.layer(conv), 1024, 8, SpaceOptions{});
  const auto every_split =
      enumerate_configurations(g.layer(conv), 1024, 8, SpaceOptions{PlacementRule::kFirstBlock, NodeRuns::kAnySplit});
  ASSERT_FALSE(configs.empty());
  EXPECT_LT(configs.size(), every_split.size());
  size_t kept = 0;
  for (const Configuration& c : every_split) {
    const int per_sample = c.tiles() / c.degrees[0];
    kept += c.tiles() <= 8 || c.tiles() == 1024 || 8 % per_sample == 0 ? 1 : 0;
  }
  EXPECT_EQ(configs.size(), kept);
}

// An extent of 576 = 2^6 x 3^2 along every dimension: divisibility prunes nothing.
struct DivisibleModel {
  ModelGraph g{"divisible"};
  int input = g.input("x", shape(576, 576, 576, 576));
  int relu = g.relu("relu", input);
  int fc = g.fully_connected("fc", relu, 576);
  int softmax = g.softmax_cross_entropy("softmax", fc);
};

// Ordered ways to write p as a product of m factors: the degree vectors with p tiles over
// m splittable dimensions when every extent is divisible.
size_t ordered_factorizations(int p, int m) {
  if (m == 1) return 1;
  size_t total = 0;
  for (int f = 1; f <= p; ++f) {
    if (p % f == 0) total += ordered_factorizations(p / f, m - 1);
  }
  return total;
}

TEST(CandidateDegrees, TwelveGpusInThreeNodesOfFourUseTileCountsOneTwoFourTwelve) {
  const DivisibleModel m;
  // Per tile count p in {1, 2, 4, 12}: ordered factorizations into m factors.
  const std::vector<std::pair<int, int>> kinds = {{m.relu, 4}, {m.input, 3}, {m.fc, 2}, {m.softmax, 1}};
  for (const auto& [id, dims] : kinds) {
    const Layer& l = m.g.layer(id);
    size_t expected = 0;
    for (int p : {1, 2, 4, 12}) expected += ordered_factorizations(p, dims);
    const auto got = candidate_degrees(l, 12, 4);
    EXPECT_EQ(got.size(), expected) << l.name;
    for (const Degrees& d : got) {
      EXPECT_TRUE(d.product() == 1 || d.product() == 2 || d.product() == 4 || d.product() == 12)
          << l.name << " " << d.str();
    }
  }
  // Concretely: 1 + 4 + 10 + 40 = 55 for a conv-like layer, 1 + 2 + 3 + 6 = 12 for fc.
  EXPECT_EQ(candidate_degrees(m.g.layer(m.relu), 12, 4).size(), 55u);
  EXPECT_EQ(candidate_degrees(m.g.layer(m.fc), 12, 4).size(), 12u);
  EXPECT_THAT(candidate_degrees(m.g.layer(m.softmax), 12, 4),
              ElementsAre(degrees(1, 1, 1, 1), degrees(2, 1, 1, 1), degrees(4, 1, 1, 1), degrees(12, 1, 1, 1)));
}

TEST(CandidateDegrees, SixGpusInOneNodeSplitInThreeAndSix) {
  const DivisibleModel m;
  EXPECT_THAT(candidate_degrees(m.g.layer(m.fc), 6, 6),
              ElementsAre(degrees(1, 1, 1, 1), degrees(1, 2, 1, 1), degrees(2, 1, 1, 1), degrees(1, 3, 1, 1),
                          degrees(3, 1, 1, 1), degrees(1, 6, 1, 1), degrees(2, 3, 1, 1), degrees(3, 2, 1, 1),
                          degrees(6, 1, 1, 1)));
  // 1 + 4 + 4 + 16 = 25 for four splittable dimensions.
  EXPECT_EQ(candidate_degrees(m.g.layer(m.relu), 6, 6).size(), 25u);
  // Three nodes of one GPU: one tile or three.
  EXPECT_THAT(candidate_degrees(m.g.layer(m.softmax), 3, 1), ElementsAre(degrees(1, 1, 1, 1), degrees(3, 1, 1, 1)));
}

TEST(CandidateDegrees, DegreesDivideTheExtentNotJustPowersOfTwo) {
  // LeNet-like extents on 12 GPUs (3 x 4): a channel degree divides both the channels and
  // a placeable tile count (1, 2, 4, 12). 6 channels: 1, 2, 3 (c3 n4) or 6 (c6 n2), not 4
  // or 12; 10 classes: 1 or 2; 120 features: every divisor of 12; a 5x5 map never.
  ModelGraph g("lenet_like");
  const int x = g.input("x", shape(48, 1, 32, 32));
  const int conv = g.conv2d("conv", x, 6, Window::square(5), true);        // 48x6x28x28
  const int pool = g.max_pool("pool", conv, Window::square(2, 2, 0));      // 48x6x14x14
  const int conv2 = g.conv2d("conv2", pool, 16, Window::square(5), true);  // 48x16x10x10
  const int pool2 = g.max_pool("pool2", conv2, Window::square(2, 2, 0));   // 48x16x5x5
  const int fc = g.fully_connected("fc", pool2, 120);
  const int out = g.fully_connected("out", fc, 10);
  auto channel_degrees = [&](int id) {
    std::set<int> c;
    for (const Degrees& d : candidate_degrees(g.layer(id), 12, 4)) c.insert(d[1]);
    return c;
  };
  EXPECT_EQ(channel_degrees(conv), (std::set<int>{1, 2, 3, 6}));
  EXPECT_EQ(channel_degrees(fc), (std::set<int>{1, 2, 3, 4, 6, 12}));
  EXPECT_EQ(channel_degrees(out), (std::set<int>{1, 2}));
  for (const Degrees& d : candidate_degrees(g.layer(pool2), 12, 4)) {
    EXPECT_EQ(d[2], 1) << d.str();
    EXPECT_EQ(d[3], 1) << d.str();
  }
  // 28 = 4 x 7: h and w of conv split by 1, 2 or 4 only.
  for (const Degrees& d : candidate_degrees(g.layer(conv), 12, 4)) {
    EXPECT_EQ(28 % d[2], 0) << d.str();
    EXPECT_NE(d[2], 12) << d.str();
  }
}

TEST(EnumerateConfigurations, AlignedBlocksOnAnyJobLieInOneNodeOrSpanWholeNodes) {
  const DivisibleModel m;
  const Layer& relu = m.g.layer(m.relu);
  struct Job {
    int nodes, per_node;
  };
  for (const Job& job : {Job{3, 4}, Job{1, 6}, Job{3, 1}, Job{2, 6}, Job{6, 8}, Job{6, 3}}) {
    const int devices = job.nodes * job.per_node;
    SCOPED_TRACE(std::to_string(job.nodes) + " x " + std::to_string(job.per_node));
    const auto configs = enumerate_configurations(relu, devices, job.per_node, kAligned);
    std::set<std::vector<int>> blocks;
    size_t expected = 0;
    for (const Degrees& d : candidate_degrees(relu, devices, job.per_node)) {
      expected += static_cast<size_t>(devices / d.product());
    }
    EXPECT_EQ(configs.size(), expected);
    for (const Configuration& c : configs) {
      const int p = c.tiles();
      ASSERT_EQ(p, c.degrees.product()) << c.str();
      EXPECT_EQ(c.devices.front() % p, 0) << c.str();
      EXPECT_LE(c.devices.back(), devices - 1) << c.str();
      for (int t = 1; t < p; ++t) EXPECT_EQ(c.devices[static_cast<size_t>(t)], c.devices.front() + t) << c.str();
      if (p <= job.per_node) {
        EXPECT_EQ(c.devices.front() / job.per_node, c.devices.back() / job.per_node) << c.str();
      } else {
        EXPECT_EQ(c.devices.front() % job.per_node, 0) << c.str();
        EXPECT_EQ(p % job.per_node, 0) << c.str();
      }
      blocks.insert(c.devices);
    }
    // Every aligned block of every placeable size appears once per size.
    size_t block_count = 0;
    for (int p = 1; p <= devices; ++p) {
      if (layerplan::placeable_tile_count(p, devices, job.per_node)) block_count += static_cast<size_t>(devices / p);
    }
    EXPECT_EQ(blocks.size(), block_count);
    // First block: one configuration per degree vector, on devices 0..p-1.
    EXPECT_EQ(enumerate_configurations(relu, devices, job.per_node, kFirst).size(),
              candidate_degrees(relu, devices, job.per_node).size());
  }
}

// ---------------------------------------------------------------------------------------
// Usage errors
// ---------------------------------------------------------------------------------------

TEST(EnumerateConfigurations, AcceptsAnyWholeNumberOfNodesOfAnySize) {
  const BigModel m;
  const Layer& conv = m.layer(m.conv);
  EXPECT_NO_THROW(enumerate_configurations(conv, 12, 4, kAligned));
  EXPECT_NO_THROW(enumerate_configurations(conv, 6, 6, kFirst));
  EXPECT_NO_THROW(enumerate_configurations(conv, 3, 1, kFirst));
  EXPECT_NO_THROW(enumerate_configurations(conv, 16, 4, kFirst));
  EXPECT_NO_THROW(enumerate_configurations(conv, 1, 1, kFirst));
}

TEST(EnumerateConfigurations, RejectsJobsThatAreNotWholeNodesNamingTheValues) {
  const BigModel m;
  const Layer& conv = m.layer(m.conv);
  auto message = [&](int devices, int per_node) -> std::string {
    try {
      enumerate_configurations(conv, devices, per_node, kFirst);
    } catch (const UsageError& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_EQ(message(10, 4), "10 GPUs: expected a whole number of nodes, a multiple of the 4 GPUs per node");
  EXPECT_EQ(message(8, 3), "8 GPUs: expected a whole number of nodes, a multiple of the 3 GPUs per node");
  EXPECT_EQ(message(4, 8), "4 GPUs: expected a whole number of nodes, a multiple of the 8 GPUs per node");
  EXPECT_EQ(message(0, 1), "0 GPUs: expected 1 or more");
  EXPECT_EQ(message(8, 0), "0 GPUs per node: expected 1 or more");
  EXPECT_EQ(message(-4, 2), "-4 GPUs: expected 1 or more");
}

TEST(IsPowerOfTwo, AcceptsOneTwoFourRejectsZeroNegativeAndOthers) {
  for (int64_t v : {1, 2, 4, 8, 1024}) EXPECT_TRUE(is_power_of_two(v)) << v;
  for (int64_t v : {0, -2, 3, 6, 12, 1023}) EXPECT_FALSE(is_power_of_two(v)) << v;
}

}  // namespace
