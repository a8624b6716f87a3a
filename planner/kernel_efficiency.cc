#include "planner/kernel_efficiency.h"

#include <algorithm>
#include <cmath>

namespace layerplan {

bool winograd_applies(const Layer& layer, bool tensor_cores) {
  const Window& w = layer.window;
  return !tensor_cores && layer.kind == LayerKind::kConv2d && layer.groups == 1 && w.kernel_h == 3 && w.kernel_w == 3 &&
         w.stride_h == 1 && w.stride_w == 1;
}

GemmHardware gemm_hardware(double peak_flops, int sms, bool tensor_cores) {
  GemmHardware hw;
  hw.tile = tensor_cores ? kTensorCoreTile : kSimtTile;
  hw.sms = std::max(1, sms);
  // Multiply-adds one SM does in the tile's fixed time, spread over the tile's outputs.
  const double sm_macs_per_s = peak_flops / 2.0 / hw.sms;
  hw.k_fixed = kTileFixedSeconds * sm_macs_per_s / (hw.tile * hw.tile);
  return hw;
}

double gemm_shape_efficiency(const GemmShape& shape, const GemmHardware& hw) {
  const double m = std::max(1.0, shape.m), n = std::max(1.0, shape.n), k = std::max(1.0, shape.k);
  const double tiles_m = std::ceil(m / hw.tile), tiles_n = std::ceil(n / hw.tile);
  const double padding = m * n / (tiles_m * tiles_n * hw.tile * hw.tile);
  double tiles = tiles_m * tiles_n;
  double depth = k;
  if (tiles < hw.sms) {  // split K over the idle SMs while slices stay deep enough
    const double split = std::max(1.0, std::min(std::floor(hw.sms / tiles), std::floor(k / kSplitKDepth)));
    tiles *= split;
    depth = k / split;
  }
  const double waves = std::ceil(tiles / hw.sms);
  const double occupancy = tiles / (waves * hw.sms);
  return padding * occupancy * depth / (depth + hw.k_fixed);
}

}  // namespace layerplan
