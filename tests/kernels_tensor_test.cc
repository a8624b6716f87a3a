// Tensors of a box, parameter shards, and the errors kernels raise for mismatched
// boxes, shapes and shards.
#include <gtest/gtest.h>

#include <random>

#include "kernels_test_util.h"
#include "runtime/kernels/reference_kernels.h"

namespace layerplan {
namespace {

Box box(Interval n, Interval c, Interval h, Interval w) { return Box{{n, c, h, w}}; }

template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "no std::invalid_argument";
}

TEST(Tensor, IndexesByGlobalCoordinates) {
  Tensor t(box({1, 2}, {2, 4}, {3, 5}, {0, 2}));
  EXPECT_EQ(t.size(), 8);
  t.at(1, 3, 4, 1) = 5.0f;
  EXPECT_EQ(t.values().back(), 5.0f);
  EXPECT_EQ(t.offset(1, 2, 3, 0), 0);
  EXPECT_TRUE(t.contains(box({1, 2}, {2, 3}, {3, 5}, {1, 2})));
  EXPECT_FALSE(t.contains(box({0, 2}, {2, 3}, {3, 5}, {1, 2})));
}

TEST(Tensor, RejectsDataOfTheWrongSize) {
  EXPECT_NE(error_of([] {
              Tensor(box({0, 1}, {0, 2}, {0, 2}, {0, 2}), std::vector<float>(7));
            }).find("needs 8 floats, got 7"),
            std::string::npos);
}

TEST(Tensor, CopiesAndAddsOnlyTheIntersection) {
  std::mt19937 rng(3);
  const Tensor src(box({0, 2}, {0, 3}, {0, 4}, {0, 4}), testing::random_values(96, rng));
  Tensor dst(box({1, 3}, {1, 3}, {2, 6}, {3, 5}));
  EXPECT_EQ(copy_intersection(src, &dst), 1 * 2 * 2 * 1);
  EXPECT_EQ(dst.at(1, 2, 3, 3), src.at(1, 2, 3, 3));
  EXPECT_EQ(dst.at(2, 1, 2, 3), 0.0f);  // outside src
  EXPECT_EQ(add_intersection(src, &dst), 4);
  EXPECT_EQ(dst.at(1, 1, 2, 3), 2 * src.at(1, 1, 2, 3));
  Tensor far(box({5, 6}, {0, 1}, {0, 1}, {0, 1}));
  EXPECT_EQ(copy_intersection(src, &far), 0);
}

TEST(Tensor, CropNamesTheBoxItCannotCover) {
  const Tensor t(box({0, 1}, {0, 1}, {0, 3}, {0, 3}));
  EXPECT_EQ(crop(t, box({0, 1}, {0, 1}, {1, 2}, {1, 3})).size(), 2);
  EXPECT_NE(error_of([&] {
              crop(t, box({0, 1}, {0, 1}, {1, 4}, {1, 3}));
            }).find("must cover [0,1)x[0,1)x[1,4)x[1,3)"),
            std::string::npos);
}

ModelGraph small_model() {
  ModelGraph g("small");
  const int in = g.input("in", Shape{{2, 3, 6, 6}});
  g.conv2d("conv", in, 4, Window::square(3, 1, 1), true);
  g.batch_norm("bn", 1);
  g.fully_connected("fc", g.flatten("flat", 1), 5);
  return g;
}

TEST(LayerParams, HaveTorchvisionsLayoutAndShardByOutputChannels) {
  const ModelGraph g = small_model();
  LayerParams conv = zero_params(g, g.layer(1));
  EXPECT_EQ(conv.row, 3 * 3 * 3);
  EXPECT_EQ(conv.weight.size(), 4u * 27u);
  EXPECT_EQ(conv.bias.size(), 4u);
  for (size_t i = 0; i < conv.weight.size(); ++i) conv.weight[i] = static_cast<float>(i);
  const LayerParams part = shard(conv, {2, 4});
  EXPECT_EQ(part.weight.front(), 54.0f);  // weight[2][0][0][0]
  LayerParams sum = zero_params(g, g.layer(1));
  add_shard(part, &sum);
  add_shard(part, &sum);
  EXPECT_EQ(sum.weight[54], 108.0f);
  EXPECT_EQ(sum.weight[0], 0.0f);

  const LayerParams bn = zero_params(g, g.layer(2));
  EXPECT_EQ(bn.weight, std::vector<float>(4, 1.0f));
  EXPECT_EQ(bn.running_var, std::vector<float>(4, 1.0f));
  EXPECT_EQ(zero_params(g, g.layer(4)).row, 4 * 6 * 6);  // flatten of the conv output
  EXPECT_NE(error_of([&] { zero_params(g, g.layer(3)); }).find("has no parameters"), std::string::npos);
  EXPECT_NE(error_of([&] { shard(part, {0, 3}); }).find("not inside"), std::string::npos);
}

TEST(KernelErrors, NameWhatWasExpected) {
  const ModelGraph g = small_model();
  ReferenceKernels k;
  const LayerRef conv(g, 1);
  const Box tile = box({0, 2}, {0, 2}, {3, 6}, {0, 6});
  const LayerParams p = shard(zero_params(g, g.layer(1)), {0, 2});
  // The tile's rows 3..5 read input rows 2..5 (halo included).
  const Tensor short_input(box({0, 2}, {0, 3}, {3, 6}, {0, 6}));
  EXPECT_NE(error_of([&] {
              k.conv2d_forward(conv, p, short_input, tile);
            }).find("input 0 must cover [0,2)x[0,3)x[2,6)x[0,6)"),
            std::string::npos);
  const Tensor input(box({0, 2}, {0, 3}, {2, 6}, {0, 6}));
  EXPECT_EQ(k.conv2d_forward(conv, p, input, tile).box(), tile);
  EXPECT_NE(error_of([&] {
              k.conv2d_forward(conv, zero_params(g, g.layer(1)), input, tile);
            }).find("expected the parameter shard of channels [0,2)"),
            std::string::npos);
  EXPECT_NE(error_of([&] { k.relu_forward(conv, input, tile); }).find("given to the relu kernel"), std::string::npos);
  EXPECT_NE(error_of([&] {
              k.conv2d_forward(conv, p, input, box({0, 2}, {0, 2}, {3, 7}, {0, 6}));
            }).find("outside"),
            std::string::npos);
  const LayerRef bn(g, 2);
  BatchNormStats stats =
      k.batch_norm_statistics(bn, Tensor(Box::whole(g.layer(1).output)), box({0, 2}, {0, 2}, {0, 6}, {0, 6}));
  EXPECT_NE(error_of([&] {
              k.batch_norm_forward(bn, zero_params(g, g.layer(2), {2, 4}), Tensor(Box::whole(g.layer(1).output)), stats,
                                   box({0, 2}, {2, 4}, {0, 6}, {0, 6}));
            }).find("statistics of channels [0,2)"),
            std::string::npos);
  ModelGraph lg("loss");
  lg.softmax_cross_entropy("loss", lg.input("logits", Shape{{4, 10, 1, 1}}));
  const Tensor logits(Box::whole(lg.layer(0).output));
  for (const std::string backend : {"reference", "onednn"}) {
    auto kernels = make_kernels(backend, 1);
    EXPECT_NE(
        error_of([&] {
          kernels->softmax_cross_entropy_forward(LayerRef(lg, 1), logits, {1, 2}, box({0, 2}, {0, 5}, {0, 1}, {0, 1}));
        }).find("tiles may split samples only"),
        std::string::npos);
    EXPECT_NE(error_of([&] {
                kernels->softmax_cross_entropy_forward(LayerRef(lg, 1), logits, {1, 10},
                                                       box({0, 2}, {0, 10}, {0, 1}, {0, 1}));
              }).find("label 10 of sample 1 is not in [0,10)"),
              std::string::npos);
  }
  EXPECT_NE(error_of([] { make_kernels("cudnn"); }).find("expected reference or onednn"), std::string::npos);
}

// A backend that records what the public functions hand its protected functions.
class RecordingKernels : public ReferenceKernels {
 public:
  std::vector<const Tensor*> conv_inputs;
  std::vector<std::vector<Box>> concat_boxes;

 protected:
  Tensor do_conv2d_forward(const LayerRef& l, const LayerParams& params, const Tensor& x, const Box& out_box) override {
    conv_inputs.push_back(&x);
    EXPECT_EQ(x.box(), l.required_input(0, out_box));
    return ReferenceKernels::do_conv2d_forward(l, params, x, out_box);
  }
  Tensor do_concat_forward(const LayerRef& l, const std::vector<const Tensor*>& xs, const Box& out_box) override {
    std::vector<Box> boxes;
    for (const Tensor* x : xs) boxes.push_back(x->box());
    concat_boxes.push_back(boxes);
    return ReferenceKernels::do_concat_forward(l, xs, out_box);
  }
};

TEST(KernelInterface, HandsBackendsInputsOfExactlyTheBoxTheTileReads) {
  const ModelGraph g = small_model();
  RecordingKernels k;
  const LayerRef conv(g, 1);
  const Box tile = box({0, 2}, {0, 2}, {3, 6}, {0, 6});
  const LayerParams p = shard(zero_params(g, g.layer(1)), {0, 2});
  const Tensor whole(Box::whole(g.layer(0).output));
  const Tensor exact(box({0, 2}, {0, 3}, {2, 6}, {0, 6}));
  k.conv2d_forward(conv, p, whole, tile);  // cropped to the halo rows 2..5
  k.conv2d_forward(conv, p, exact, tile);  // passed on without a copy
  ASSERT_EQ(k.conv_inputs.size(), 2u);
  EXPECT_NE(k.conv_inputs[0], &whole);
  EXPECT_EQ(k.conv_inputs[1], &exact);

  // A concat tile whose channels miss its second input: that slot gets an empty tensor of
  // its (empty) required box and the caller's tensor is not read.
  ModelGraph cg("cat");
  const int in = cg.input("in", Shape{{1, 2, 2, 2}});
  const int cat = cg.concat("cat", {cg.relu("a", in), cg.relu("b", in)});
  const LayerRef c(cg, cat);
  const Tensor a(Box::whole(cg.layer(1).output));
  k.concat_forward(c, {&a, nullptr}, box({0, 1}, {0, 2}, {0, 2}, {0, 2}));
  ASSERT_EQ(k.concat_boxes.size(), 1u);
  EXPECT_EQ(k.concat_boxes[0][0], a.box());
  EXPECT_EQ(k.concat_boxes[0][1], c.required_input(1, box({0, 1}, {0, 2}, {0, 2}, {0, 2})));
  EXPECT_TRUE(k.concat_boxes[0][1].empty());
}

TEST(KernelErrors, AreTheSameForEveryBackend) {
  // The public functions check before any backend runs: both backends say the same.
  const ModelGraph g = small_model();
  const LayerRef conv(g, 1);
  const Box tile = box({0, 2}, {0, 2}, {3, 6}, {0, 6});
  const LayerParams p = shard(zero_params(g, g.layer(1)), {0, 2});
  const Tensor short_input(box({0, 2}, {0, 3}, {3, 6}, {0, 6}));
  std::vector<std::string> errors;
  for (const KernelBackend backend : {KernelBackend::kReference, KernelBackend::kOnednn}) {
    auto k = make_kernels(backend, 1);
    EXPECT_EQ(k->name(), kernel_backend_name(backend));
    errors.push_back(error_of([&] { k->conv2d_forward(conv, p, short_input, tile); }) + " | " +
                     error_of([&] { k->relu_backward(conv, short_input, short_input); }));
  }
  EXPECT_EQ(errors[0], errors[1]);
  EXPECT_NE(errors[0].find("input 0 must cover"), std::string::npos);
  EXPECT_NE(errors[0].find("given to the relu kernel"), std::string::npos);
}

TEST(BatchNormStatistics, PartialSumsOverTilesEqualTheWholeTensors) {
  const ModelGraph g = small_model();
  std::mt19937 rng(5);
  const Tensor x = testing::random_tensor(g.layer(1).output, rng);
  ReferenceKernels k;
  const LayerRef bn(g, 2);
  const BatchNormStats whole = k.batch_norm_statistics(bn, x, Box::whole(g.layer(2).output));
  // Split samples and height and width: four tiles share every channel.
  BatchNormStats reduced;
  for (int t = 0; t < 8; ++t) {
    const Box tile = tile_box(g.layer(2).output, Degrees{{2, 1, 2, 2}}, t);
    const BatchNormStats s = k.batch_norm_statistics(bn, x, tile);
    EXPECT_EQ(s.count, 9);
    if (t == 0)
      reduced = s;
    else
      reduced.add(s);
  }
  EXPECT_EQ(reduced.count, whole.count);
  for (size_t c = 0; c < 4; ++c) {
    EXPECT_NEAR(reduced.sum[c], whole.sum[c], 1e-9);
    EXPECT_NEAR(reduced.sum_sq[c], whole.sum_sq[c], 1e-9);
  }
  BatchNormStats other = k.batch_norm_statistics(bn, x, box({0, 2}, {0, 2}, {0, 6}, {0, 6}));
  EXPECT_NE(error_of([&] { reduced.add(other); }).find("cannot be summed"), std::string::npos);
}

TEST(Dropout, DropsAboutHalfAndTheSameElementsForTheSameSeed) {
  int kept = 0, same = 0;
  for (int64_t i = 0; i < 10000; ++i) {
    kept += dropout_keeps(9, i);
    same += dropout_keeps(9, i) == dropout_keeps(10, i);
  }
  EXPECT_NEAR(kept, 5000, 200);
  EXPECT_NEAR(same, 5000, 200);  // another seed is another mask
}

}  // namespace
}  // namespace layerplan
