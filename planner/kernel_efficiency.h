#pragma once
// The share of a GPU's peak a layer's kernels reach, by the kernels' shape
// (docs/cost-model.md, "Kernel shape"). Convolutions and fully-connected layers run as implicit
// GEMMs, C[M×N] += A[M×K]·B[K×N], cut into Tm×Tn output tiles, one thread block each:
//  - padding: a dimension that is not a multiple of the tile edge computes the remainder
//    of its last tile anyway (N = 64 channels fills half of a 128-wide tile);
//  - waves: the tiles run in waves of one per SM; the last wave leaves SMs idle (a GEMM
//    with fewer tiles than SMs splits K to fill them, keeping kSplitKDepth of K per slice);
//  - depth: each tile pays a fixed time (its pipeline's first loads from memory and its
//    epilogue's stores) worth K0 = fixed time × the SM's multiply-add rate / (Tm·Tn) of K,
//    so a tile of depth K runs at K / (K + K0) of the rate. Faster tensor cores lose more.
// A GEMM's rate is then compute_efficiency (the share of peak the largest GEMMs reach) times
// these three. Memory-bound kernels move their bytes at Device::memory_efficiency of HBM's.
#include <cstdint>

#include "model/model_graph.h"

namespace layerplan {

// Tile edges: tensor-core GEMMs need 128×128 tiles to feed the tensor cores from shared
// memory (CUTLASS's and cuDNN's default tensor-op threadblock tiles); SIMT FP32 GEMMs reach
// their rate with 64×64 tiles (CUTLASS's smallest full-rate SGEMM tiles).
inline constexpr double kTensorCoreTile = 128;
inline constexpr double kSimtTile = 64;
// A tile's fixed time: its pipeline's first loads wait one HBM round trip (about 0.4-0.5 µs,
// microbenchmarked on Volta and Ampere) and its epilogue stores the tile.
inline constexpr double kTileFixedSeconds = 0.5e-6;
// Split-K keeps at least this much of K per slice.
inline constexpr double kSplitKDepth = 512;

// Winograd's F(2×2, 3×3) computes a 3×3, stride-1 convolution's 2×2 output tile with 16
// multiplies instead of 36 (Lavin & Gray, CVPR 2016); cuDNN runs it for FP32 convolutions
// on CUDA cores (its WINOGRAD algorithms), forward, data and weight gradient. Tensor-core
// convolutions run as implicit GEMMs. The transforms are element-wise and left out.
inline constexpr double kWinogradGain = 36.0 / 16.0;

struct GemmShape {
  double m = 1, n = 1, k = 1;
};

// What the shape model needs to know about the GPU at the training precision.
struct GemmHardware {
  double tile = kSimtTile;  // Tm = Tn
  double sms = 108;
  double k_fixed = 0;  // K0, in elements of K
};

// Whether a convolution's kernels run Winograd's F(2×2, 3×3): 3×3, stride 1, ungrouped, on CUDA cores.
bool winograd_applies(const Layer& layer, bool tensor_cores);

GemmHardware gemm_hardware(double peak_flops, int sms, bool tensor_cores);

// The share of the GPU's large-GEMM rate a GEMM of this shape reaches, in (0, 1].
double gemm_shape_efficiency(const GemmShape& shape, const GemmHardware& hardware);

}  // namespace layerplan
