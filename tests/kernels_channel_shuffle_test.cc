// The channel shuffle and channel slice kernels of both backends against the index formula
// written here from PyTorch: x.view(n, g, C/g, h, w).transpose(1, 2).reshape(n, C, h, w)
// puts input channel i·(C/g) + j at output channel j·g + i; x[:, f:f+k] takes channels
// f..f+k-1. Tiles give the same elements as the whole tensor, and a shuffle's channels
// cannot be split.
#include <gtest/gtest.h>

#include <random>
#include <stdexcept>

#include "kernels_test_util.h"
#include "runtime/kernels/backend_helpers.h"

namespace layerplan {
namespace {

const Shape kShape{{2, 12, 3, 5}};

// Output channel of input channel (i, j) = (group, index in the group), as PyTorch's view
// and transpose place it.
int64_t shuffled_channel(int64_t in_channel, int64_t channels, int64_t groups) {
  const int64_t per_group = channels / groups;
  return (in_channel % per_group) * groups + in_channel / per_group;
}

class ChannelKernels : public ::testing::TestWithParam<std::string> {};

TEST_P(ChannelKernels, ShuffleMovesEachChannelWherePyTorchPutsIt) {
  auto kernels = make_kernels(GetParam(), 1);
  std::mt19937 rng(7);
  const Tensor x = testing::random_tensor(kShape, rng);
  const Tensor dy = testing::random_tensor(kShape, rng);
  const Box whole = Box::whole(kShape);
  for (const int groups : {2, 3, 4, 6}) {
    SCOPED_TRACE("groups " + std::to_string(groups) + " on " + GetParam());
    ModelGraph g("shuffle");
    const LayerRef l(g, g.channel_shuffle("shuffle", g.input("in", kShape), groups));
    const Tensor y = kernels->channel_shuffle_forward(l, x, whole);
    const Tensor dx = kernels->channel_shuffle_backward(l, dy);
    ASSERT_EQ(y.box(), whole);
    ASSERT_EQ(dx.box(), whole);
    kernels_internal::for_each_element(whole, [&](int64_t n, int64_t c, int64_t h, int64_t w) {
      const int64_t to = shuffled_channel(c, kShape.c(), groups);
      ASSERT_EQ(y.at(n, to, h, w), x.at(n, c, h, w)) << "input channel " << c;
      ASSERT_EQ(dx.at(n, c, h, w), dy.at(n, to, h, w)) << "input channel " << c;  // the inverse permutation
    });
  }
}

TEST_P(ChannelKernels, SliceCopiesItsChannelsAndTheirGradients) {
  auto kernels = make_kernels(GetParam(), 1);
  std::mt19937 rng(8);
  const Tensor x = testing::random_tensor(kShape, rng);
  ModelGraph g("slice");
  const LayerRef l(g, g.channel_slice("slice", g.input("in", kShape), 5, 4));
  const Box out = Box::whole(l.layer.output);
  const Tensor y = kernels->channel_slice_forward(l, x, out);
  ASSERT_EQ(y.box(), out);
  const Tensor dy = testing::random_tensor(l.layer.output, rng);
  const Tensor dx = kernels->channel_slice_backward(l, dy);
  Box read = Box::whole(kShape);
  read.dim[1] = {5, 9};
  ASSERT_EQ(dx.box(), read);  // only the slice's channels
  kernels_internal::for_each_element(out, [&](int64_t n, int64_t c, int64_t h, int64_t w) {
    ASSERT_EQ(y.at(n, c, h, w), x.at(n, c + 5, h, w));
    ASSERT_EQ(dx.at(n, c + 5, h, w), dy.at(n, c, h, w));
  });
}

// Tiles of both kinds give exactly the whole tensor's elements: a shuffle split by samples,
// rows and columns, a slice also by channels (its tile reads its own channels shifted).
TEST_P(ChannelKernels, TilesGiveTheWholeTensorsElements) {
  auto kernels = make_kernels(GetParam(), 1);
  std::mt19937 rng(9);
  const Tensor x = testing::random_tensor(kShape, rng);
  ModelGraph g("both");
  const int in = g.input("in", kShape);
  // Both layers first, then their LayerRefs: a LayerRef holds a reference into the graph's
  // layers, which the next append may move.
  const int shuffle_id = g.channel_shuffle("shuffle", in, 3);
  const int slice_id = g.channel_slice("slice", in, 2, 8);
  const LayerRef shuffle(g, shuffle_id);
  const LayerRef slice(g, slice_id);
  for (const LayerRef* l : {&shuffle, &slice}) {
    const Box whole = Box::whole(l->layer.output);
    const bool is_shuffle = l->layer.kind == LayerKind::kChannelShuffle;
    const Tensor want =
        is_shuffle ? kernels->channel_shuffle_forward(*l, x, whole) : kernels->channel_slice_forward(*l, x, whole);
    const Degrees degrees{{2, is_shuffle ? 1 : 2, 3, 1}};
    for (int t = 0; t < degrees.product(); ++t) {
      const Box box = tile_box(l->layer.output, degrees, t);
      const Tensor input = crop(x, l->required_input(0, box));
      const Tensor y = is_shuffle ? kernels->channel_shuffle_forward(*l, input, box)
                                  : kernels->channel_slice_forward(*l, input, box);
      EXPECT_EQ(y.values(), crop(want, box).values()) << l->layer.name << " tile " << box.str();
    }
  }
}

TEST(ChannelShuffleKernel, RefusesATileOfSomeChannels) {
  auto kernels = make_kernels("reference");
  ModelGraph g("shuffle");
  const LayerRef l(g, g.channel_shuffle("shuffle", g.input("in", kShape), 2));
  Box half = Box::whole(kShape);
  half.dim[1] = {0, 6};
  std::mt19937 rng(10);
  EXPECT_THROW(kernels->channel_shuffle_forward(l, testing::random_tensor(kShape, rng), half), std::logic_error);
  EXPECT_THROW(kernels->channel_shuffle_backward(l, Tensor(half)), std::logic_error);
}

INSTANTIATE_TEST_SUITE_P(Backends, ChannelKernels, ::testing::Values("reference", "onednn"));

}  // namespace
}  // namespace layerplan
