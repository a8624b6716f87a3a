// Specification of model/geometry.h: how a configuration cuts a tensor into tiles, which
// input region a tile reads, and exactly which elements move between the devices of a
// producer configuration and those of a consumer configuration.
//
// Every expected volume below is worked out by hand in the comment next to it. Shapes are
// NCHW; "n4 on 0-3" means the sample dimension is cut into 4 equal blocks, tile t on
// device t.
#include "model/geometry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <numeric>
#include <ostream>
#include <stdexcept>
#include <utility>
#include <vector>

#include "model/model_graph.h"

namespace layerplan {
// Readable failure messages for the value types under test.
void PrintTo(const PairVolume& v, std::ostream* os) {
  *os << "{" << v.src << "->" << v.dst << ": " << v.elements << "}";
}
void PrintTo(const Box& b, std::ostream* os) { *os << b.str(); }
}  // namespace layerplan

namespace {

using layerplan::Box;
using layerplan::Configuration;
using layerplan::Degrees;
using layerplan::intersect;
using layerplan::Interval;
using layerplan::kNumDims;
using layerplan::Layer;
using layerplan::ModelGraph;
using layerplan::PairVolume;
using layerplan::required_input_box;
using layerplan::Shape;
using layerplan::tile_box;
using layerplan::tile_coords;
using layerplan::tile_index;
using layerplan::transfer_volumes;
using layerplan::Window;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

Shape shape(int64_t n, int64_t c, int64_t h, int64_t w) { return Shape{{n, c, h, w}}; }

Degrees degrees(int n, int c, int h, int w) { return Degrees{{n, c, h, w}}; }

// Tile t on devices[t].
Configuration on(Degrees d, std::vector<int> devices) { return Configuration{d, std::move(devices)}; }

// Tile t on device first + t.
Configuration on_block(Degrees d, int first = 0) {
  std::vector<int> devices(static_cast<size_t>(d.product()));
  std::iota(devices.begin(), devices.end(), first);
  return Configuration{d, devices};
}

Box box(Interval n, Interval c, Interval h, Interval w) { return Box{{n, c, h, w}}; }

// Every power-of-two degree vector with at most max_tiles tiles whose degrees divide `s`.
std::vector<Degrees> all_degrees(const Shape& s, int max_tiles) {
  std::vector<Degrees> out;
  for (int n = 1; n <= max_tiles; n *= 2)
    for (int c = 1; n * c <= max_tiles; c *= 2)
      for (int h = 1; n * c * h <= max_tiles; h *= 2)
        for (int w = 1; n * c * h * w <= max_tiles; w *= 2) {
          if (s.n() % n == 0 && s.c() % c == 0 && s.h() % h == 0 && s.w() % w == 0) {
            out.push_back(degrees(n, c, h, w));
          }
        }
  return out;
}

// Independent reference for transfer_volumes: intersect every consumer tile's required
// box with every producer tile's box, no cleverness.
std::vector<PairVolume> brute_force_volumes(const ModelGraph& g, const Layer& consumer, int slot,
                                            const Configuration& producer, const Configuration& consumer_config) {
  const Shape& in = g.input_shape(consumer, slot);
  std::map<std::pair<int, int>, int64_t> sums;
  for (int q = 0; q < consumer_config.tiles(); ++q) {
    const Box need = required_input_box(g, consumer, slot, tile_box(consumer.output, consumer_config.degrees, q));
    for (int p = 0; p < producer.tiles(); ++p) {
      const int src = producer.devices[static_cast<size_t>(p)];
      const int dst = consumer_config.devices[static_cast<size_t>(q)];
      const int64_t v = intersect(need, tile_box(in, producer.degrees, p)).volume();
      if (src != dst && v > 0) sums[{src, dst}] += v;
    }
  }
  std::vector<PairVolume> out;
  for (const auto& [pair, v] : sums) out.push_back({pair.first, pair.second, v});
  return out;
}

std::vector<PairVolume> reversed(std::vector<PairVolume> v) {
  for (PairVolume& p : v) std::swap(p.src, p.dst);
  std::sort(v.begin(), v.end(),
            [](const PairVolume& a, const PairVolume& b) { return std::pair(a.src, a.dst) < std::pair(b.src, b.dst); });
  return v;
}

// ---------------------------------------------------------------------------------------
// Hand-worked transfer volumes
// ---------------------------------------------------------------------------------------

TEST(TransferVolumes, ElementwiseSampleSplitToChannelSplitMovesAllButOneSixteenth) {
  // ReLU on 8x4x8x8 (2048 elements). Producer n4 on 0-3: device p holds samples
  // [2p, 2p+2) of all 4 channels. Consumer c4 on 0-3: device q needs channel q of all 8
  // samples. Their overlap is 2 samples x 1 channel x 8 x 8 = 128 elements = 1/16 of the
  // tensor for every (p, q): each device keeps 1/16 and sends 3 x 128 = 3/16 to the others.
  ModelGraph g("relu");
  const int x = g.input("x", shape(8, 4, 8, 8));
  const Layer& relu = g.layer(g.relu("relu", x));
  EXPECT_THAT(transfer_volumes(g, relu, 0, on_block(degrees(4, 1, 1, 1)), on_block(degrees(1, 4, 1, 1))),
              ElementsAre(PairVolume{0, 1, 128}, PairVolume{0, 2, 128}, PairVolume{0, 3, 128}, PairVolume{1, 0, 128},
                          PairVolume{1, 2, 128}, PairVolume{1, 3, 128}, PairVolume{2, 0, 128}, PairVolume{2, 1, 128},
                          PairVolume{2, 3, 128}, PairVolume{3, 0, 128}, PairVolume{3, 1, 128}, PairVolume{3, 2, 128}));
}

TEST(TransferVolumes, ConvSampleSplitConsumerGathersWholeSamplesFromSpatialTiles) {
  // Input 4x2x8x8, conv 3x3 stride 1 pad 1 -> 4x4x8x8. Producer h2 w2 on 0-3 (tile order
  // w inside h): device 0 rows 0-3 cols 0-3, 1 rows 0-3 cols 4-7, 2 rows 4-7 cols 0-3,
  // 3 rows 4-7 cols 4-7, each with all 4 samples and 2 channels.
  // Consumer n4: device q computes sample q over the whole 8x8 map, so (halo included)
  // it needs all 8 input rows and columns of sample q: 2 x 8 x 8 = 128 elements, of which
  // each producer quadrant holds 1 x 2 x 4 x 4 = 32. It keeps its own 32 and receives
  // 3 x 32 = 96; every (p, q) pair with p != q moves 32.
  ModelGraph g("conv");
  const int x = g.input("x", shape(4, 2, 8, 8));
  const Layer& conv = g.layer(g.conv2d("conv", x, 4, Window::square(3, 1, 1), false));
  EXPECT_THAT(transfer_volumes(g, conv, 0, on_block(degrees(1, 1, 2, 2)), on_block(degrees(4, 1, 1, 1))),
              ElementsAre(PairVolume{0, 1, 32}, PairVolume{0, 2, 32}, PairVolume{0, 3, 32}, PairVolume{1, 0, 32},
                          PairVolume{1, 2, 32}, PairVolume{1, 3, 32}, PairVolume{2, 0, 32}, PairVolume{2, 1, 32},
                          PairVolume{2, 3, 32}, PairVolume{3, 0, 32}, PairVolume{3, 1, 32}, PairVolume{3, 2, 32}));
}

TEST(TransferVolumes, ConvSameHeightSplitMovesOnlyOneHaloRowPerNeighbour) {
  // Input 2x3x8x5 (N=2, C=3, W=5), conv 3x3 stride 1 pad 1 -> 2x4x8x5, producer and
  // consumer both h4 on 0-3: device t holds / computes rows [2t, 2t+2). Output rows
  // [2t, 2t+2) read input rows [2t-1, 2t+3): one row from each neighbour (clipped at the
  // top and bottom borders). One row is N x C x W = 2 x 3 x 5 = 30 elements; devices 0
  // and 3 have one neighbour, devices 1 and 2 two.
  ModelGraph g("halo");
  const int x = g.input("x", shape(2, 3, 8, 5));
  const Layer& conv = g.layer(g.conv2d("conv", x, 4, Window::square(3, 1, 1), true));
  const Configuration h4 = on_block(degrees(1, 1, 4, 1));
  EXPECT_THAT(transfer_volumes(g, conv, 0, h4, h4),
              ElementsAre(PairVolume{0, 1, 30}, PairVolume{1, 0, 30}, PairVolume{1, 2, 30}, PairVolume{2, 1, 30},
                          PairVolume{2, 3, 30}, PairVolume{3, 2, 30}));
}

TEST(TransferVolumes, ConvChannelSplitConsumerNeedsAllInputChannels) {
  // Input 2x4x4x4 (128 elements), producer c2 on 0-1: device 0 channels 0-1, device 1
  // channels 2-3, 2 x 2 x 4 x 4 = 64 each. Conv 3x3 pad 1 -> 2x8x4x4, consumer c2 on 0-1:
  // each device computes 4 output channels, and every output channel sums over all 4 input
  // channels, so each needs the whole input and receives the other device's 64.
  ModelGraph g("conv_c");
  const int x = g.input("x", shape(2, 4, 4, 4));
  const int conv_id = g.conv2d("conv", x, 8, Window::square(3, 1, 1), false);
  const int relu_id = g.relu("relu", x);
  const Layer& conv = g.layer(conv_id);
  const Layer& relu = g.layer(relu_id);
  const Configuration c2 = on_block(degrees(1, 2, 1, 1));
  EXPECT_THAT(transfer_volumes(g, conv, 0, c2, c2), ElementsAre(PairVolume{0, 1, 64}, PairVolume{1, 0, 64}));
  // An element-wise layer with the same split reads only its own channels: nothing moves.
  EXPECT_THAT(transfer_volumes(g, relu, 0, c2, c2), IsEmpty());
}

TEST(TransferVolumes, FullyConnectedConsumerNeedsAllInputFeatures) {
  // Input 4x2x2x2 (32 elements, 8 features per sample), producer h2 on 0-1: each device
  // holds one of the two rows, 4 x 2 x 1 x 2 = 16 elements. FC to 10 outputs.
  ModelGraph g("fc");
  const int x = g.input("x", shape(4, 2, 2, 2));
  const Layer& fc = g.layer(g.fully_connected("fc", x, 10));
  const Configuration h2 = on_block(degrees(1, 1, 2, 1));
  // Consumer c2: each device computes 5 of the 10 outputs for all 4 samples; every output
  // reads all 8 features, so each needs all 32 elements and receives the other row: 16.
  EXPECT_THAT(transfer_volumes(g, fc, 0, h2, on_block(degrees(1, 2, 1, 1))),
              ElementsAre(PairVolume{0, 1, 16}, PairVolume{1, 0, 16}));
  // Consumer n2: device q computes samples [2q, 2q+2) and needs all their features,
  // 2 x 8 = 16, half of which (one row: 2 x 2 x 1 x 2 = 8) lives on the other device.
  EXPECT_THAT(transfer_volumes(g, fc, 0, h2, on_block(degrees(2, 1, 1, 1))),
              ElementsAre(PairVolume{0, 1, 8}, PairVolume{1, 0, 8}));
}

TEST(TransferVolumes, ConcatSlotsAreReadAtTheirChannelOffset) {
  // a: 2x2x4x4 (channels 0-1 of the concat), b: 2x6x4x4 (channels 2-7), both whole on
  // device 2. Concat output 2x8x4x4 split c2 on 0-1: device 0 computes channels 0-3,
  // device 1 channels 4-7.
  ModelGraph g("concat");
  const int a = g.input("a", shape(2, 2, 4, 4));
  const int b = g.input("b", shape(2, 6, 4, 4));
  const Layer& cat = g.layer(g.concat("cat", {a, b}));
  const Configuration whole_on_2 = on(degrees(1, 1, 1, 1), {2});
  const Configuration c2 = on_block(degrees(1, 2, 1, 1));
  // Slot 0: device 0 needs all of a (2 x 2 x 16 = 64); device 1's channels 4-7 miss a.
  EXPECT_THAT(transfer_volumes(g, cat, 0, whole_on_2, c2), ElementsAre(PairVolume{2, 0, 64}));
  // Slot 1: device 0 needs b's channels [0, 2) (concat channels 2-3): 2 x 2 x 16 = 64;
  // device 1 needs b's channels [2, 6) (concat 4-7): 2 x 4 x 16 = 128.
  EXPECT_THAT(transfer_volumes(g, cat, 1, whole_on_2, c2), ElementsAre(PairVolume{2, 0, 64}, PairVolume{2, 1, 128}));
}

TEST(RequiredInputBox, ConcatTileOutsideAnInputsChannelsNeedsNothingFromIt) {
  ModelGraph g("concat");
  const int a = g.input("a", shape(2, 2, 4, 4));
  const int b = g.input("b", shape(2, 6, 4, 4));
  const Layer& cat = g.layer(g.concat("cat", {a, b}));
  // Concat channels [2, 8) are exactly input 1: nothing of input 0, all of input 1.
  const Box only_b = box({0, 2}, {2, 8}, {0, 4}, {0, 4});
  EXPECT_TRUE(required_input_box(g, cat, 0, only_b).empty());
  EXPECT_EQ(required_input_box(g, cat, 1, only_b), box({0, 2}, {0, 6}, {0, 4}, {0, 4}));
  // Concat channels [1, 3) straddle the seam: channel 1 of a, channel 0 of b, and the
  // spatial region of the tile, not the whole map.
  const Box seam = box({1, 2}, {1, 3}, {0, 2}, {2, 4});
  EXPECT_EQ(required_input_box(g, cat, 0, seam), box({1, 2}, {1, 2}, {0, 2}, {2, 4}));
  EXPECT_EQ(required_input_box(g, cat, 1, seam), box({1, 2}, {0, 1}, {0, 2}, {2, 4}));
}

TEST(TransferVolumes, GlobalAvgPoolChannelSplitReadsOnlyItsOwnChannels) {
  // Input 4x8x4x4, producer h2 on 0-1 (rows 0-1 and rows 2-3). Global average pool
  // -> 4x8x1x1 split c2 on 0-1: device q averages channels [4q, 4q+4) and needs their full
  // 4x4 maps, 4 x 4 x 4 x 4 = 256 elements, half of the rows on the other device: 128.
  // (A fully-connected consumer would need all 8 channels: 256 from the other device.)
  ModelGraph g("gap");
  const int x = g.input("x", shape(4, 8, 4, 4));
  const Layer& gap = g.layer(g.global_avg_pool("gap", x));
  EXPECT_THAT(transfer_volumes(g, gap, 0, on_block(degrees(1, 1, 2, 1)), on_block(degrees(1, 2, 1, 1))),
              ElementsAre(PairVolume{0, 1, 128}, PairVolume{1, 0, 128}));
}

TEST(TransferVolumes, StrideTwoPoolingHaloReachesBackwardOnly) {
  // Input 2x3x8x8, max pool 3x3 stride 2 pad 1 -> 2x3x4x4, producer and consumer h2 on
  // 0-1. Output rows [0, 2) read input rows [0*2-1, 1*2-1+3) = [-1, 4) -> [0, 4): all on
  // device 0. Output rows [2, 4) read [2*2-1, 3*2-1+3) = [3, 8): row 3 comes from
  // device 0. One row is N x C x W = 2 x 3 x 8 = 48 elements, moving 0 -> 1 only.
  ModelGraph g("pool");
  const int x = g.input("x", shape(2, 3, 8, 8));
  const Layer& pool = g.layer(g.max_pool("pool", x, Window::square(3, 2, 1)));
  const Configuration h2 = on_block(degrees(1, 1, 2, 1));
  EXPECT_THAT(transfer_volumes(g, pool, 0, h2, h2), ElementsAre(PairVolume{0, 1, 48}));
}

TEST(TransferVolumes, NonOverlappingPoolWindowsNeedNoHalo) {
  // Max pool 2x2 stride 2: output rows [0, 2) read input rows [0, 4), output rows [2, 4)
  // read [4, 8): exactly the producer's h2 tiles.
  ModelGraph g("pool2");
  const int x = g.input("x", shape(2, 3, 8, 8));
  const Layer& pool = g.layer(g.max_pool("pool", x, Window::square(2, 2, 0)));
  const Configuration h2 = on_block(degrees(1, 1, 2, 1));
  EXPECT_THAT(transfer_volumes(g, pool, 0, h2, h2), IsEmpty());
}

TEST(TransferVolumes, NothingMovesBetweenTilesOnTheSameDevice) {
  // Producer on device 5 alone, consumer n2 on devices 5 and 6: the half computed on
  // device 5 is already there; the other half (4 x 4 x 8 x 8 = 1024) goes 5 -> 6.
  ModelGraph g("local");
  const int x = g.input("x", shape(8, 4, 8, 8));
  const Layer& relu = g.layer(g.relu("relu", x));
  EXPECT_THAT(transfer_volumes(g, relu, 0, on(degrees(1, 1, 1, 1), {5}), on(degrees(2, 1, 1, 1), {5, 6})),
              ElementsAre(PairVolume{5, 6, 1024}));
}

// ---------------------------------------------------------------------------------------
// Direction: forward activations, and the gradients that retrace them
// ---------------------------------------------------------------------------------------

TEST(TransferVolumes, ListsTheForwardMoveFromProducerDeviceToConsumerDevice) {
  // transfer_volumes() is the forward move: src is the producer's device, dst the
  // consumer's. Backward, the consumer's input gradients for the same regions go back
  // from dst to src, so the backward move is this same list with src and dst swapped (the
  // cost model prices each edge once forward and once backward from these volumes).
  // Producer whole on device 0, consumer n2 on 0-1: the forward move is 0 -> 1 only.
  ModelGraph g("direction");
  const int x = g.input("x", shape(8, 4, 8, 8));
  const Layer& relu = g.layer(g.relu("relu", x));
  EXPECT_THAT(transfer_volumes(g, relu, 0, on(degrees(1, 1, 1, 1), {0}), on_block(degrees(2, 1, 1, 1))),
              ElementsAre(PairVolume{0, 1, 1024}));
}

TEST(TransferVolumes, ElementwiseMoveBackIsTheForwardMoveReversed) {
  // For an element-wise layer the required box is the tile itself, so moving from A to B
  // touches exactly the regions that moving from B to A does, in the opposite direction:
  // the backward gradient flow of A -> B has the volumes of the forward flow B -> A.
  ModelGraph g("reverse");
  const int x = g.input("x", shape(8, 8, 8, 8));
  const Layer& relu = g.layer(g.relu("relu", x));
  const std::vector<std::pair<Configuration, Configuration>> cases = {
      {on_block(degrees(4, 1, 1, 1)), on_block(degrees(1, 4, 1, 1))},
      {on_block(degrees(2, 1, 2, 2)), on(degrees(1, 2, 1, 2), {7, 6, 5, 4})},
      {on_block(degrees(1, 1, 8, 1)), on_block(degrees(2, 2, 1, 1), 2)},
  };
  for (const auto& [a, b] : cases) {
    SCOPED_TRACE(a.str() + " / " + b.str());
    const auto forward = transfer_volumes(g, relu, 0, a, b);
    EXPECT_FALSE(forward.empty());
    EXPECT_EQ(reversed(forward), transfer_volumes(g, relu, 0, b, a));
  }
}

TEST(TransferVolumes, AgreesWithBruteForceBoxIntersection) {
  // The optimized enumeration of overlapping producer tiles must find exactly what
  // intersecting every pair of tiles finds, for every kind that reads an input.
  ModelGraph g("mixed");
  const int x = g.input("x", shape(8, 8, 8, 8));
  const int y = g.input("y", shape(8, 4, 8, 8));
  const int cat = g.concat("cat", {x, y});
  const std::vector<std::pair<int, int>> consumers = {
      // (layer id, slot)
      {g.conv2d("conv3", x, 8, Window::square(3, 1, 1), true), 0},
      {g.conv2d("conv5s2", x, 4, Window::square(5, 2, 2), false), 0},
      {g.max_pool("pool3s2", x, Window::square(3, 2, 1)), 0},
      {g.avg_pool("avg2", x, Window::square(2, 2, 0)), 0},
      {g.global_avg_pool("gap", x), 0},
      {g.fully_connected("fc", x, 16), 0},
      {g.relu("relu", x), 0},
      {cat, 0},
      {cat, 1},
  };
  // Devices in an order that is not the identity, overlapping the producer's.
  const auto shuffled = [](Degrees d) {
    std::vector<int> devs(static_cast<size_t>(d.product()));
    for (size_t i = 0; i < devs.size(); ++i) devs[i] = static_cast<int>((i * 5 + 3) % 8);
    return Configuration{d, devs};
  };
  int checked = 0;
  for (const auto& [id, slot] : consumers) {
    const Layer& consumer = g.layer(id);
    const Shape& in = g.input_shape(consumer, slot);
    for (const Degrees& pd : all_degrees(in, 8)) {
      for (const Degrees& cd : all_degrees(consumer.output, 8)) {
        for (const Configuration& producer : {on_block(pd), shuffled(pd)}) {
          const Configuration consumer_config = on_block(cd);
          ASSERT_EQ(transfer_volumes(g, consumer, slot, producer, consumer_config),
                    brute_force_volumes(g, consumer, slot, producer, consumer_config))
              << consumer.name << " slot " << slot << ": " << producer.str() << " -> " << consumer_config.str();
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 1000);
}

// ---------------------------------------------------------------------------------------
// Tiles
// ---------------------------------------------------------------------------------------

TEST(Tiles, CoverTheTensorExactlyOnceForEveryDegreeVector) {
  for (const Shape& s : {shape(8, 8, 8, 8), shape(16, 4, 2, 8), shape(2, 64, 1, 1)}) {
    const Box whole = Box::whole(s);
    for (const Degrees& d : all_degrees(s, 64)) {
      SCOPED_TRACE(s.str() + " " + d.str());
      const std::vector<Box> boxes = layerplan::tiles(s, on_block(d));
      ASSERT_EQ(boxes.size(), static_cast<size_t>(d.product()));
      int64_t total = 0;
      for (size_t i = 0; i < boxes.size(); ++i) {
        EXPECT_EQ(boxes[i].volume(), s.elements() / d.product());  // equal tiles
        EXPECT_EQ(intersect(boxes[i], whole), boxes[i]);           // inside the tensor
        for (size_t j = i + 1; j < boxes.size(); ++j) {
          EXPECT_TRUE(intersect(boxes[i], boxes[j]).empty()) << boxes[i].str() << " " << boxes[j].str();
        }
        total += boxes[i].volume();
      }
      EXPECT_EQ(total, s.elements());
    }
  }
}

TEST(Tiles, IndexAndCoordinatesRoundTrip) {
  for (const Degrees& d : all_degrees(shape(8, 8, 8, 8), 64)) {
    for (int t = 0; t < d.product(); ++t) {
      const std::array<int, kNumDims> coords = tile_coords(d, t);
      for (int k = 0; k < kNumDims; ++k) {
        EXPECT_GE(coords[static_cast<size_t>(k)], 0);
        EXPECT_LT(coords[static_cast<size_t>(k)], d[k]);
      }
      EXPECT_EQ(tile_index(d, coords), t) << d.str();
    }
  }
}

TEST(Tiles, AreNumberedChannelInnermostThenWidthHeightSample) {
  // Coordinates are NCHW; with every degree 2, index bit 0 is c, bit 1 w, bit 2 h, bit 3 n.
  const Degrees all2 = degrees(2, 2, 2, 2);
  using C = std::array<int, kNumDims>;
  EXPECT_EQ(tile_coords(all2, 0), (C{0, 0, 0, 0}));
  EXPECT_EQ(tile_coords(all2, 1), (C{0, 1, 0, 0}));
  EXPECT_EQ(tile_coords(all2, 2), (C{0, 0, 0, 1}));
  EXPECT_EQ(tile_coords(all2, 4), (C{0, 0, 1, 0}));
  EXPECT_EQ(tile_coords(all2, 8), (C{1, 0, 0, 0}));
  EXPECT_EQ(tile_coords(all2, 13), (C{1, 1, 1, 0}));  // 13 = 8 + 4 + 1
  // Unequal degrees: n2 c4 h1 w2, t = (n * 2 + w) * 4 + c, so t = 13 = (1*2 + 1)*4 + 1.
  EXPECT_EQ(tile_coords(degrees(2, 4, 1, 2), 13), (C{1, 1, 0, 1}));
  EXPECT_EQ(tile_index(degrees(2, 4, 1, 2), C{1, 3, 0, 0}), 11);  // (1*2 + 0)*4 + 3
}

TEST(Tiles, BoxOfATileIsItsBlockAlongEachDimension) {
  // 8x4x8x8 split n2 h2: tile 1 is sample block 0, row block 1.
  EXPECT_EQ(tile_box(shape(8, 4, 8, 8), degrees(2, 1, 2, 1), 1), box({0, 4}, {0, 4}, {4, 8}, {0, 8}));
  EXPECT_EQ(tile_box(shape(8, 4, 8, 8), degrees(2, 1, 2, 1), 1).str(), "[0,4)x[0,4)x[4,8)x[0,8)");
  // 8x4x8x8 split c4: tile 3 is channel 3 of every sample.
  EXPECT_EQ(tile_box(shape(8, 4, 8, 8), degrees(1, 4, 1, 1), 3), box({0, 8}, {3, 4}, {0, 8}, {0, 8}));
}

// ---------------------------------------------------------------------------------------
// Names
// ---------------------------------------------------------------------------------------

TEST(ConfigurationStr, NamesSplitDimensionsAndDevices) {
  EXPECT_EQ(on_block(degrees(4, 1, 2, 2)).str(), "n4 h2 w2 on gpus 0-15");
  EXPECT_EQ(on_block(degrees(1, 4, 1, 1)).str(), "c4 on gpus 0-3");
  EXPECT_EQ(on_block(degrees(1, 1, 1, 1)).str(), "n1 on gpu 0");
  EXPECT_EQ(on_block(degrees(2, 1, 1, 1), 4).str(), "n2 on gpus 4-5");
  EXPECT_EQ(on(degrees(2, 1, 1, 1), {0, 2}).str(), "n2 on gpus 0,2");
  EXPECT_EQ(degrees(2, 2, 2, 2).str(), "n2 c2 h2 w2");
  EXPECT_EQ(degrees(1, 1, 1, 1).str(), "n1");
}

// ---------------------------------------------------------------------------------------
// Required input regions
// ---------------------------------------------------------------------------------------

TEST(RequiredInputBox, ClipsTheHaloAtTheBorders) {
  ModelGraph g("clip");
  const int x = g.input("x", shape(1, 1, 8, 8));
  const int conv3_id = g.conv2d("conv3", x, 2, Window::square(3, 1, 1), false);
  const int conv5_id = g.conv2d("conv5", x, 2, Window::square(5, 1, 2), false);
  const Layer& conv3 = g.layer(conv3_id);
  const Layer& conv5 = g.layer(conv5_id);
  // Rows [0, 4) read [-1, 5), clipped to [0, 5); rows [4, 8) read [3, 9) -> [3, 8).
  EXPECT_EQ(required_input_box(g, conv3, 0, box({0, 1}, {0, 2}, {0, 4}, {0, 8})), box({0, 1}, {0, 1}, {0, 5}, {0, 8}));
  EXPECT_EQ(required_input_box(g, conv3, 0, box({0, 1}, {0, 2}, {4, 8}, {0, 8})), box({0, 1}, {0, 1}, {3, 8}, {0, 8}));
  // An interior block keeps its halo on both sides: rows [2, 4) read [1, 5).
  EXPECT_EQ(required_input_box(g, conv3, 0, box({0, 1}, {1, 2}, {2, 4}, {0, 8})), box({0, 1}, {0, 1}, {1, 5}, {0, 8}));
  // 5x5 pad 2, a corner: rows [0, 2) read [-2, 4) -> [0, 4); cols [6, 8) read [4, 10) -> [4, 8).
  EXPECT_EQ(required_input_box(g, conv5, 0, box({0, 1}, {0, 2}, {0, 2}, {6, 8})), box({0, 1}, {0, 1}, {0, 4}, {4, 8}));
}

// ceil_mode (PyTorch's rule): 12 rows by 3/2 give 6 outputs, not 5; the last window,
// rows [10, 13), reads past the input, which the border tile's box clips.
TEST(RequiredInputBox, CeilModeWindowsOverhangTheBorderAndAreClipped) {
  ModelGraph g("ceil");
  const int x = g.input("x", shape(1, 1, 12, 11));
  Window w = Window::square(3, 2);
  w.ceil_mode = true;
  const int max_id = g.max_pool("max", x, w);
  Window padded = Window::square(3, 2, 1);
  padded.ceil_mode = true;
  const int avg_id = g.avg_pool("avg", x, padded);
  // 3/3 pad 1: 12 rows give 5 (4 rounding down); of 11 columns, rounding up would give 5
  // too, but the 5th window would start at column 11, in the right padding: 4.
  Window last_would_start_in_padding = Window::square(3, 3, 1);
  last_would_start_in_padding.ceil_mode = true;
  const int drop_id = g.max_pool("drop", x, last_would_start_in_padding);
  const Layer& max = g.layer(max_id);
  EXPECT_EQ(max.output, shape(1, 1, 6, 5));  // 11 columns: 5 either way
  EXPECT_EQ(g.layer(avg_id).output, shape(1, 1, 7, 6));
  EXPECT_EQ(g.layer(drop_id).output, shape(1, 1, 5, 4));
  // Rows [3, 6) read [6, 13) -> [6, 12); rows [0, 3) read [0, 7).
  EXPECT_EQ(required_input_box(g, max, 0, box({0, 1}, {0, 1}, {3, 6}, {0, 5})), box({0, 1}, {0, 1}, {6, 12}, {0, 11}));
  EXPECT_EQ(required_input_box(g, max, 0, box({0, 1}, {0, 1}, {0, 3}, {0, 5})), box({0, 1}, {0, 1}, {0, 7}, {0, 11}));
  // Height split in two on both sides, tiles swapped between the devices: the top consumer
  // tile reads rows [0, 6) from the other device (row 6 is its own), the bottom one rows
  // [6, 12); the overhang moves nothing.
  const Configuration producer{degrees(1, 1, 2, 1), {0, 1}}, consumer{degrees(1, 1, 2, 1), {1, 0}};
  int64_t moved = 0;
  for (const PairVolume& v : transfer_volumes(g, max, 0, producer, consumer)) moved += v.elements;
  EXPECT_EQ(moved, 6 * 11 + 6 * 11);
}

TEST(RequiredInputBox, PoolingKeepsChannelsConvolutionReadsAllOfThem) {
  ModelGraph g("channels");
  const int x = g.input("x", shape(2, 4, 4, 4));
  const int pool_id = g.max_pool("pool", x, Window::square(2, 2, 0));  // 2x4x2x2
  const int conv_id = g.conv2d("conv", x, 8, Window::square(1, 1, 0), false);
  // (Layer references are taken after the graph stops growing.)
  const Layer& pool = g.layer(pool_id);
  const Layer& conv = g.layer(conv_id);
  EXPECT_EQ(required_input_box(g, pool, 0, box({1, 2}, {2, 3}, {0, 1}, {1, 2})), box({1, 2}, {2, 3}, {0, 2}, {2, 4}));
  EXPECT_EQ(required_input_box(g, conv, 0, box({1, 2}, {6, 8}, {0, 2}, {2, 4})), box({1, 2}, {0, 4}, {0, 2}, {2, 4}));
}

TEST(RequiredInputBox, FlattenSplitAlongChannelsIsALogicError) {
  ModelGraph g("flatten");
  const int x = g.input("x", shape(4, 2, 2, 2));
  const Layer& flat = g.layer(g.flatten("flat", x));  // 4x8x1x1
  EXPECT_EQ(required_input_box(g, flat, 0, box({2, 4}, {0, 8}, {0, 1}, {0, 1})), box({2, 4}, {0, 2}, {0, 2}, {0, 2}));
  EXPECT_THROW(required_input_box(g, flat, 0, box({0, 4}, {0, 4}, {0, 1}, {0, 1})), std::logic_error);
}

}  // namespace
