// Grouped and depthwise convolutions in the model and the planner: the checks of
// ModelGraph::conv2d, parameters and multiply-adds (weight (out, in/groups, kh, kw)), the
// input channels a channel tile reads, the model file's `groups` field, and the compute
// price of a channel-split depthwise convolution. Expected values are worked out in the
// comments.
#include <gtest/gtest.h>

#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/error.h"
#include "model/geometry.h"
#include "model/layer_math.h"
#include "model/model_file.h"
#include "model/model_graph.h"
#include "planner/cost_model.h"
#include "planner/planner.h"
#include "topology/cluster_spec.h"
#include "topology/device_graph.h"

namespace layerplan {
namespace {

Shape shape(int64_t n, int64_t c, int64_t h, int64_t w) { return Shape{{n, c, h, w}}; }

Box box(Interval n, Interval c, Interval h, Interval w) { return Box{{n, c, h, w}}; }

Configuration on_block(Degrees d) {
  std::vector<int> devices(static_cast<size_t>(d.product()));
  std::iota(devices.begin(), devices.end(), 0);
  return Configuration{d, devices};
}

TEST(GroupedConv, GroupsMustDivideBothChannelCounts) {
  ModelGraph g("bad");
  const int x = g.input("x", shape(1, 6, 4, 4));
  EXPECT_NO_THROW(g.conv2d("ok", x, 9, Window::square(3), false, 3));
  try {
    g.conv2d("c4", x, 8, Window::square(3), false, 4);  // 6 input channels
    FAIL() << "groups 4 of 6 input channels accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(),
                 "conv2d c4: groups 4 must be >= 1 and divide its input channels (6) and output channels (8)");
  }
  EXPECT_THROW(g.conv2d("c3", x, 8, Window::square(3), false, 3), std::invalid_argument);  // 8 outputs
  EXPECT_THROW(g.conv2d("c0", x, 6, Window::square(3), false, 0), std::invalid_argument);
  EXPECT_EQ(g.layer(g.conv2d("plain", x, 4, Window::square(1), false)).groups, 1);
}

TEST(GroupedConv, DepthwiseParametersAndMacsDivideByTheChannels) {
  // MobileNet v2's first depthwise conv: 32 channels, 3x3, pad 1, on 112x112, batch 2.
  // Weight (32, 1, 3, 3): 288 parameters (a full conv would have 32 x 32 x 9 = 9216).
  // Each output element reads 1 x 3 x 3 inputs: 2 x 32 x 112 x 112 x 9 = 7225344 MACs.
  ModelGraph g("mobilenet_dw");
  const int x = g.input("x", shape(2, 32, 112, 112));
  const Layer& dw = g.layer(g.conv2d("dw", x, 32, Window::square(3, 1, 1), false, 32));
  EXPECT_EQ(parameter_count(g, dw), 288);
  EXPECT_EQ(forward_macs(g, dw), 7225344);
  EXPECT_DOUBLE_EQ(forward_flops(g, dw), 2.0 * 7225344);
}

TEST(GroupedConv, ResNeXtGroup32ParametersAndMacs) {
  // ResNeXt-50 32x4d, layer1.0.conv2: 128 -> 128 channels, 3x3 pad 1, 32 groups, 56x56.
  // Weight (128, 4, 3, 3) = 4608 parameters, plus 128 biases here; MACs per image
  // 128 x 56 x 56 x 4 x 9 = 14450688 (torchvision's published 4.27 GMACs sum such terms).
  ModelGraph g("resnext");
  const int x = g.input("x", shape(1, 128, 56, 56));
  const Layer& conv = g.layer(g.conv2d("conv2", x, 128, Window::square(3, 1, 1), true, 32));
  EXPECT_EQ(parameter_count(g, conv), 4608 + 128);
  EXPECT_EQ(forward_macs(g, conv), 14450688);
}

TEST(GroupedConv, ChannelTileReadsOnlyTheInputChannelsOfItsGroups) {
  ModelGraph g("groups");
  const int x = g.input("x", shape(2, 64, 8, 8));
  const int dw_id = g.conv2d("dw", x, 64, Window::square(3, 1, 1), false, 64);
  const int g2_id = g.conv2d("g2", x, 32, Window::square(1), false, 2);            // 32 in, 16 out per group
  const int g32_id = g.conv2d("g32", x, 128, Window::square(3, 2, 1), false, 32);  // 2 in, 4 out per group
  const Layer& dw = g.layer(dw_id);
  const Layer& g2 = g.layer(g2_id);
  const Layer& g32 = g.layer(g32_id);
  // Depthwise: exactly the tile's own channels (rows 2-4 read 1-5 for the halo).
  EXPECT_EQ(required_input_box(g, dw, 0, box({0, 2}, {16, 32}, {2, 4}, {0, 8})), box({0, 2}, {16, 32}, {1, 5}, {0, 8}));
  // Group 2: output channels [0,8) lie in group 0, which reads inputs [0,32); [8,24)
  // spans both groups and reads all 64; [16,32) is group 1: inputs [32,64).
  EXPECT_EQ(required_input_box(g, g2, 0, box({0, 2}, {0, 8}, {0, 8}, {0, 8})).dim[1], (Interval{0, 32}));
  EXPECT_EQ(required_input_box(g, g2, 0, box({0, 2}, {8, 24}, {0, 8}, {0, 8})).dim[1], (Interval{0, 64}));
  EXPECT_EQ(required_input_box(g, g2, 0, box({0, 2}, {16, 32}, {0, 8}, {0, 8})).dim[1], (Interval{32, 64}));
  // Group 32: outputs [8,16) are groups 2-3, inputs [4,8); output 13 alone is group 3,
  // inputs [6,8); [6,10) straddles groups 1-2, inputs [2,6).
  EXPECT_EQ(required_input_box(g, g32, 0, box({0, 1}, {8, 16}, {0, 4}, {0, 4})), box({0, 1}, {4, 8}, {0, 8}, {0, 8}));
  EXPECT_EQ(required_input_box(g, g32, 0, box({0, 1}, {13, 14}, {0, 1}, {0, 1})).dim[1], (Interval{6, 8}));
  EXPECT_EQ(required_input_box(g, g32, 0, box({0, 1}, {6, 10}, {0, 1}, {0, 1})).dim[1], (Interval{2, 6}));
}

TEST(GroupedConv, ChannelSplitDepthwiseConvNeedsNoReplicatedInput) {
  // Input 2x64x8x8 split c4 on devices 0-3 (16 channels, 2048 elements each). A depthwise
  // conv split c4 the same way reads only its own channels: nothing moves. A full conv
  // would gather the other three quarters on every device: 3 x 2048 per device pair set.
  ModelGraph g("dw_split");
  const int x = g.input("x", shape(2, 64, 8, 8));
  const int dw_id = g.conv2d("dw", x, 64, Window::square(3, 1, 1), false, 64);
  const int full_id = g.conv2d("full", x, 64, Window::square(3, 1, 1), false);
  const Configuration c4 = on_block(Degrees{{1, 4, 1, 1}});
  EXPECT_TRUE(transfer_volumes(g, g.layer(dw_id), 0, c4, c4).empty());
  int64_t moved = 0;
  for (const PairVolume& v : transfer_volumes(g, g.layer(full_id), 0, c4, c4)) moved += v.elements;
  EXPECT_EQ(moved, 4 * 3 * 2048);
  // Group 2 split c4: devices 0-1 hold group 0's outputs and read inputs [0,32), which
  // devices 0 and 1 hold: each receives the other's 2048; the same on devices 2-3.
  const int g2_id = g.conv2d("g2", x, 64, Window::square(1), false, 2);
  const std::vector<PairVolume> g2 = transfer_volumes(g, g.layer(g2_id), 0, c4, c4);
  EXPECT_EQ(g2, (std::vector<PairVolume>{{0, 1, 2048}, {1, 0, 2048}, {2, 3, 2048}, {3, 2, 2048}}));
}

TEST(GroupedConv, CostOfAChannelSplitDepthwiseConvIsItsOwnShare) {
  // One GPU model: 1e12 FLOP/s, 1e11 B/s, fp32, no overhead. Depthwise 3x3 pad 1 on
  // 1x64x16x16, split c4: each tile computes 16 x 256 outputs of 9 MACs, 2 x 36864 =
  // 73728 FLOPs (7.3728e-8 s), and moves its 16 input channels (4096 elements), its 4096
  // outputs and its 144 weights: 8336 x 4 B = 33344 B (3.3344e-7 s): memory-bound.
  ModelGraph g("dw_cost");
  const int x = g.input("x", shape(1, 64, 16, 16));
  const Layer& dw = g.layer(g.conv2d("dw", x, 64, Window::square(3, 1, 1), false, 64));
  EXPECT_EQ(forward_macs(g, dw), 64 * 256 * 9);
  Device gpu;
  gpu.model = "unit";
  gpu.peak_flops = 1e12;
  gpu.compute_efficiency = 1.0;
  gpu.memory_bandwidth = 1e11;
  gpu.memory_bytes = 16e9;
  gpu.kernel_overhead_s = 0.0;
  gpu.bytes_per_element = 4;
  const DeviceGraph devices(1, 4, gpu, std::vector<Link>(16, Link{1e10, 0.0}), Link{1e9, 0.0});
  const CostModel model(g, devices);
  const PassTimes t = model.pass_times(dw, on_block(Degrees{{1, 4, 1, 1}}));
  EXPECT_NEAR(t.forward_s, 3.3344e-7, 1e-18);
  EXPECT_NEAR(t.backward_s, 2 * 3.3344e-7, 1e-18);
}

TEST(GroupedConv, PlannerPricesADepthwiseConvApartFromAFullOneOfTheSameShapes) {
  // Two convolutions reading and writing 8x32x16x16 with the same window: the planner
  // shares cost tables between layers of equal signatures, which must tell them apart.
  // Full: 2 x 8 x 32 x 256 x 32 x 9 = 37.7 MFLOP forward; depthwise 1/32 of that, and
  // memory-bound: its price is far below the full conv's.
  ModelGraph g("full_and_depthwise");
  const int x = g.input("x", shape(8, 32, 16, 16));
  const int full = g.conv2d("full", x, 32, Window::square(3, 1, 1), false);
  const int dw = g.conv2d("dw", g.relu("relu", full), 32, Window::square(3, 1, 1), false, 32);
  g.softmax_cross_entropy("loss", g.fully_connected("fc", g.global_avg_pool("gap", dw), 10));
  ClusterSpec spec;
  spec.nodes = 1;
  spec.gpus_per_node = 1;
  spec.kernel_overhead_us = 0;
  const Plan plan = make_plan(g, build_device_graph(spec));
  ASSERT_EQ(plan.layer_wise.layers.size(), static_cast<size_t>(g.size()));
  const LayerCost& full_cost = plan.layer_wise.layers[static_cast<size_t>(full)];
  const LayerCost& dw_cost = plan.layer_wise.layers[static_cast<size_t>(dw)];
  EXPECT_GT(dw_cost.compute_s, 0.0);
  EXPECT_LT(dw_cost.compute_s, 0.5 * full_cost.compute_s);
  const auto devices = build_device_graph(spec);  // the model keeps a reference to it
  const CostModel model(g, devices);
  EXPECT_DOUBLE_EQ(dw_cost.compute_s, model.compute_time(g.layer(dw), dw_cost.config));
}

TEST(GroupedConv, ModelFileWritesGroupsOnlyAboveOne) {
  ModelGraph g("m");
  const int x = g.input("input", shape(1, 8, 6, 6));
  const int dw = g.conv2d("dw", x, 8, Window::square(3, 1, 1), false, 8);
  g.conv2d("pw", dw, 16, Window::square(1), true);
  const std::string text = model_to_json(g);
  EXPECT_NE(text.find("\"groups\": 8"), std::string::npos) << text;
  EXPECT_EQ(text.find("\"groups\": 1"), std::string::npos) << text;
  const ModelGraph back = model_from_json(text, 1, "m.json");
  EXPECT_EQ(back.layer(1).groups, 8);
  EXPECT_EQ(back.layer(2).groups, 1);
  EXPECT_EQ(model_to_json(back), text);
}

TEST(GroupedConv, ModelFileRefusesGroupsThatDoNotDivide) {
  const std::string text = R"({"format": "layerplan-model", "version": 1, "name": "m",
    "input": {"channels": 6, "height": 4, "width": 4},
    "layers": [{"name": "c", "kind": "conv2d", "out_channels": 6, "kernel": 3, "groups": 4}]})";
  try {
    model_from_json(text, 1, "m.json");
    FAIL() << "groups 4 of 6 channels accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("m.json: layers[0] 'c': conv2d c: groups 4 must be >= 1 and divide"),
              std::string::npos)
        << e.what();
  }
  const std::string zero = R"({"format": "layerplan-model", "version": 1, "name": "m",
    "input": {"channels": 6, "height": 4, "width": 4},
    "layers": [{"name": "c", "kind": "conv2d", "out_channels": 6, "groups": 0}]})";
  EXPECT_THROW(model_from_json(zero, 1, "m.json"), UsageError);
}

}  // namespace
}  // namespace layerplan
