#pragma once
// The buffer a windowed GPU kernel (convolution, pooling) reads: the tile's input, halo
// included, with the zero (or -inf) padding the tile needs at the true border of the tensor
// around it, so that the library convolves or pools it with padding 0 (docs/gpu-backend.md;
// the legacy cuDNN API takes one symmetric padding, which a border tile cannot use). Pure
// host arithmetic, tested in CI (tests/gpu/padded_tile_test.cc).
#include <array>
#include <cstdint>

#include "model/geometry.h"
#include "model/model_graph.h"

namespace layerplan::gpu {

struct PaddedTile {
  std::array<int64_t, 4> extents{};  // n, c, h, w of the padded buffer
  std::array<int64_t, 4> at{};       // where the tile's input starts in it
  int64_t count() const { return extents[0] * extents[1] * extents[2] * extents[3]; }
};

// For the output tile `out_box` of a layer with window `w` that reads `in_box` (its required
// input box).
PaddedTile padded_tile(const Window& w, const Box& out_box, const Box& in_box);

}  // namespace layerplan::gpu
