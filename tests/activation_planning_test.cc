// Activation and mul layers in the planner: the boxes a mul reads (a broadcast scale's
// samples and channels only), what moves for it, their arithmetic, element-wise fusion
// (an activation joins its producer, a mul of two inputs does not), and a plan of a
// squeeze-and-excitation net on 4 GPUs.
#include <gtest/gtest.h>

#include "model/geometry.h"
#include "model/layer_math.h"
#include "planner/cost_tables.h"
#include "planner/planner.h"
#include "topology/cluster_spec.h"

namespace layerplan {
namespace {

Box box(Interval n, Interval c, Interval h, Interval w) { return Box{{n, c, h, w}}; }

Configuration on_devices(Degrees d) {
  Configuration c{d, {}};
  for (int t = 0; t < d.product(); ++t) c.devices.push_back(t);
  return c;
}

TEST(MulGeometry, ABroadcastScaleIsReadForTheTilesSamplesAndChannelsOnly) {
  ModelGraph g("se");
  const int x = g.input("x", Shape{{4, 8, 6, 6}});
  const int scale = g.global_avg_pool("scale", x);
  const Layer& mul = g.layer(g.mul("mul", x, scale));
  const Box tile = box({2, 4}, {0, 4}, {3, 6}, {0, 3});
  EXPECT_EQ(required_input_box(g, mul, 0, tile), tile);
  EXPECT_EQ(required_input_box(g, mul, 1, tile), box({2, 4}, {0, 4}, {0, 1}, {0, 1}));
  // Same shapes: each slot is read over the tile.
  const Layer& same = g.layer(g.mul("same", x, g.relu("relu", x)));
  EXPECT_EQ(required_input_box(g, same, 1, tile), tile);
}

TEST(MulGeometry, EveryHeightTileOfTheMulReadsTheWholeScale) {
  // Scale 4x8x1x1 on device 0 alone; the mul split h4 on devices 0-3: devices 1, 2, 3 each
  // read all 32 scale elements (device 0 holds them), 96 in all.
  ModelGraph g("se");
  const int x = g.input("x", Shape{{4, 8, 8, 8}});
  const int scale = g.global_avg_pool("scale", x);
  const Layer& mul = g.layer(g.mul("mul", x, scale));
  int64_t moved = 0;
  for (const PairVolume& v : transfer_volumes(g, mul, 1, on_devices(Degrees{}), on_devices(Degrees{{1, 1, 4, 1}}))) {
    EXPECT_EQ(v.src, 0);
    EXPECT_EQ(v.elements, 32);
    moved += v.elements;
  }
  EXPECT_EQ(moved, 96);
}

TEST(ActivationMath, FlopsAndSplits) {
  ModelGraph g("a");
  const int x = g.input("x", Shape{{2, 4, 3, 3}});
  // Ids first: a reference into the graph dies when the next layer is appended.
  const int clip_id = g.activation("clip", x, ActivationKind::kClip, 0, 6);
  const int silu_id = g.activation("silu", x, ActivationKind::kSilu);
  const int mul_id = g.mul("mul", x, g.global_avg_pool("p", x));
  const Layer& clip = g.layer(clip_id);
  const Layer& silu = g.layer(silu_id);
  const Layer& mul = g.layer(mul_id);
  EXPECT_EQ(forward_flops(g, clip), 2.0 * 72);
  EXPECT_EQ(forward_flops(g, silu), 5.0 * 72);
  EXPECT_EQ(forward_flops(g, mul), 72.0);
  EXPECT_EQ(parameter_count(g, mul), 0);
  EXPECT_EQ(splittable_dims(LayerKind::kActivation), (std::array<bool, kNumDims>{true, true, true, true}));
  EXPECT_EQ(splittable_dims(LayerKind::kMul), (std::array<bool, kNumDims>{true, true, true, true}));
  EXPECT_FALSE(channel_split_shards_weights(LayerKind::kActivation));
  EXPECT_THROW(g.mul("bad", x, g.input("y", Shape{{2, 4, 1, 3}})), std::invalid_argument);
}

// conv -> bn -> hardswish -> SE (pool, 1x1 conv, relu, 1x1 conv, hardsigmoid) -> mul -> relu6
// -> pool -> fc -> loss.
ModelGraph se_model(int64_t batch) {
  ModelGraph g("se");
  const int x = g.input("x", Shape{{batch, 3, 32, 32}});
  const int block = g.activation("hswish", g.batch_norm("bn", g.conv2d("conv", x, 16, Window::square(3, 1, 1), false)),
                                 ActivationKind::kHardSwish);
  const int fc1 = g.conv2d("se_fc1", g.global_avg_pool("se_pool", block), 8, Window::square(1), true);
  const int gate = g.activation("se_gate", g.conv2d("se_fc2", g.relu("se_relu", fc1), 16, Window::square(1), true),
                                ActivationKind::kHardSigmoid, kHardSigmoidAlpha, kHardSigmoidBeta);
  const int r6 = g.activation("relu6", g.mul("se_mul", block, gate), ActivationKind::kClip, 0, 6);
  g.softmax_cross_entropy("loss", g.fully_connected("fc", g.global_avg_pool("pool", r6), 10));
  return g;
}

TEST(ActivationFusion, ActivationsJoinTheirProducerAMulDoesNot) {
  const ModelGraph g = se_model(8);
  const SearchUnits units = group_units(g, true);
  auto unit = [&](const std::string& name) {
    for (const Layer& l : g.layers()) {
      if (l.name == name) return units.unit_of_layer[static_cast<size_t>(l.id)];
    }
    return -1;
  };
  EXPECT_EQ(unit("hswish"), unit("conv"));  // conv -> bn -> hardswish: one unit
  EXPECT_EQ(unit("se_gate"), unit("se_fc2"));
  EXPECT_NE(unit("se_mul"), unit("hswish"));  // two inputs: its own unit
  EXPECT_EQ(unit("relu6"), unit("se_mul"));
  EXPECT_EQ(group_units(g, false).unit_of_layer.size(), static_cast<size_t>(g.size()));
}

TEST(ActivationFusion, TheSeNetPlansOnFourGpusNoWorseThanDataParallel) {
  ClusterSpec spec;
  spec.nodes = 1;
  spec.gpus_per_node = 4;
  const ModelGraph g = se_model(32);
  const Plan plan = make_plan(g, build_device_graph(spec));
  ASSERT_EQ(plan.layer_wise.layers.size(), static_cast<size_t>(g.size()));
  EXPECT_GT(plan.layer_wise.additive_s(), 0.0);
  EXPECT_LE(plan.layer_wise.additive_s(), plan.baselines.at(0).additive_s() * (1 + 1e-9));
}

}  // namespace
}  // namespace layerplan
