// The buffer the GPU's convolutions and pooling read (runtime/gpu/padded_tile.h), checked on
// every windowed layer of the zoo cut into tiles: convolved or pooled with padding 0, it
// gives exactly the tile's output (what the cuDNN calls rely on), and its padding lies only
// where the tile touches the true border of the input, never more than the layer's.
#include "runtime/gpu/padded_tile.h"

#include <gtest/gtest.h>

#include "model/zoo.h"

namespace layerplan {
namespace {

bool windowed(LayerKind kind) {
  return kind == LayerKind::kConv2d || kind == LayerKind::kMaxPool || kind == LayerKind::kAvgPool;
}

TEST(PaddedTile, ValidWindowsOverThePaddedTileGiveExactlyTheTile) {
  int tiles = 0;
  for (const char* model : {"lenet5", "alexnet", "resnet50", "inception_v3"}) {
    const ModelGraph graph = build_zoo_model(model, 2);
    for (const Layer& layer : graph.layers()) {
      if (!windowed(layer.kind)) continue;
      const Window& w = layer.window;
      const Shape& in = graph.input_shape(layer, 0);
      for (const Degrees& degrees : {Degrees{{1, 1, 1, 1}}, Degrees{{2, 1, 3, 1}}, Degrees{{1, 2, 2, 4}}}) {
        if (degrees[2] > layer.output.h() || degrees[3] > layer.output.w()) continue;
        for (int t = 0; t < degrees.product(); ++t) {
          const Box out = tile_box(layer.output, degrees, t);
          const Box read = required_input_box(graph, layer, 0, out);
          const gpu::PaddedTile p = gpu::padded_tile(w, out, read);
          SCOPED_TRACE(std::string(model) + " " + layer.name + " tile " + out.str());
          EXPECT_EQ((p.extents[2] - w.kernel_h) / w.stride_h + 1, out.dim[2].size());
          EXPECT_EQ((p.extents[2] - w.kernel_h) % w.stride_h, 0);
          EXPECT_EQ((p.extents[3] - w.kernel_w) / w.stride_w + 1, out.dim[3].size());
          EXPECT_EQ((p.extents[3] - w.kernel_w) % w.stride_w, 0);
          // Padded row 0 is the first row the tile's first window reads.
          EXPECT_EQ(read.dim[2].lo - p.at[2], out.dim[2].lo * w.stride_h - w.pad_h);
          EXPECT_EQ(read.dim[3].lo - p.at[3], out.dim[3].lo * w.stride_w - w.pad_w);
          const int64_t bottom = p.extents[2] - p.at[2] - read.dim[2].size();
          const int64_t right = p.extents[3] - p.at[3] - read.dim[3].size();
          EXPECT_TRUE(p.at[2] >= 0 && p.at[2] <= w.pad_h && (p.at[2] == 0 || read.dim[2].lo == 0));
          EXPECT_TRUE(p.at[3] >= 0 && p.at[3] <= w.pad_w && (p.at[3] == 0 || read.dim[3].lo == 0));
          EXPECT_TRUE(bottom >= 0 && bottom <= w.pad_h && (bottom == 0 || read.dim[2].hi == in.h()));
          EXPECT_TRUE(right >= 0 && right <= w.pad_w && (right == 0 || read.dim[3].hi == in.w()));
          EXPECT_EQ(p.extents[0], read.dim[0].size());
          EXPECT_EQ(p.extents[1], read.dim[1].size());
          ++tiles;
        }
      }
    }
  }
  EXPECT_GT(tiles, 500);
}

}  // namespace
}  // namespace layerplan
