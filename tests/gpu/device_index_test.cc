// The index arithmetic the GPU backend's own kernels run (runtime/gpu/device_index.h),
// checked on the host against the CPU's tensors: a box copied with box_copy_index equals
// crop/copy_intersection; channel_element visits exactly one channel's elements; the
// dropout index equals the whole tensor's NCHW offset.
#include "runtime/gpu/device_index.h"

#include <gtest/gtest.h>

#include <random>
#include <set>

#include "runtime/kernels/tensor.h"
#include "tests/kernels_test_util.h"

namespace layerplan::testing {
namespace {

using Ext = std::array<int64_t, 4>;

Ext extents_of(const Box& b) { return {b.dim[0].size(), b.dim[1].size(), b.dim[2].size(), b.dim[3].size()}; }
Ext offset_in(const Box& inner, const Box& outer) {
  return {inner.dim[0].lo - outer.dim[0].lo, inner.dim[1].lo - outer.dim[1].lo, inner.dim[2].lo - outer.dim[2].lo,
          inner.dim[3].lo - outer.dim[3].lo};
}

// A random box inside `outer`, at least one element each way.
Box random_box_in(const Box& outer, std::mt19937& rng) {
  Box b = outer;
  for (Interval& i : b.dim) {
    const int64_t lo = std::uniform_int_distribution<int64_t>(i.lo, i.hi - 1)(rng);
    i = {lo, std::uniform_int_distribution<int64_t>(lo + 1, i.hi)(rng)};
  }
  return b;
}

TEST(DeviceIndex, BoxCopyMovesWhatCopyIntersectionMoves) {
  std::mt19937 rng(5);
  const Shape shape{{3, 4, 7, 6}};
  for (int trial = 0; trial < 200; ++trial) {
    const Tensor src = random_tensor(shape, rng);
    const Box dst_box = random_box_in(Box::whole(shape), rng);
    const Box region = random_box_in(dst_box, rng);
    Tensor want(dst_box);
    copy_intersection(crop(src, region), &want);
    Tensor got(dst_box);
    const Ext box = extents_of(region), src_ext = extents_of(src.box()), dst_ext = extents_of(dst_box);
    const Ext src_at = offset_in(region, src.box()), dst_at = offset_in(region, dst_box);
    for (int64_t i = 0; i < region.volume(); ++i) {
      const gpu::BoxCopyIndex at =
          gpu::box_copy_index(i, box.data(), src_ext.data(), src_at.data(), dst_ext.data(), dst_at.data());
      got.data()[at.dst] = src.data()[at.src];
    }
    ASSERT_EQ(got.values(), want.values()) << region.str() << " into " << dst_box.str();
  }
}

TEST(DeviceIndex, ChannelElementsAreExactlyTheChannelsPlanes) {
  const int64_t n = 3, channels = 5, hw = 4;
  std::set<int64_t> seen;
  for (int64_t c = 0; c < channels; ++c) {
    for (int64_t k = 0; k < n * hw; ++k) {
      const int64_t e = gpu::channel_element(channels, hw, c, k);
      EXPECT_EQ(e / hw % channels, c);
      EXPECT_TRUE(seen.insert(e).second);
    }
  }
  EXPECT_EQ(seen.size(), static_cast<size_t>(n * channels * hw));
}

TEST(DeviceIndex, DropoutIndexIsTheWholeTensorsOffset) {
  std::mt19937 rng(9);
  const Shape shape{{2, 5, 6, 3}};
  const Tensor whole = random_tensor(shape, rng);
  const Box tile = random_box_in(Box::whole(shape), rng);
  const Tensor part = crop(whole, tile);
  const Ext ext = extents_of(tile), origin = {tile.dim[0].lo, tile.dim[1].lo, tile.dim[2].lo, tile.dim[3].lo};
  const Ext all = {shape.n(), shape.c(), shape.h(), shape.w()};
  for (int64_t i = 0; i < part.size(); ++i) {
    EXPECT_EQ(whole.data()[gpu::whole_tensor_index(i, ext.data(), origin.data(), all.data())], part.data()[i]);
  }
}

}  // namespace
}  // namespace layerplan::testing
