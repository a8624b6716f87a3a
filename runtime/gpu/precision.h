#pragma once
// What `--precision fp32|tf32|bf16` means on the GPU backend (docs/gpu-backend.md,
// "Precision"): which math the GPU libraries may use. Pure host logic; the kernels read
// these rules instead of deciding themselves. The CPU backend computes in fp32 only.
// Precision is the planner's (topology/gpu_catalog.h: which peak FLOP/s a plan is priced at), so a
// plan made with `layerplan plan --precision X` is trained with `layerplan train --precision X`:
//   fp32  exact FP32: cuDNN CUDNN_FMA_MATH, cuBLAS without TF32; what the exactness checks use
//   tf32  FP32 tensors, TF32 tensor-core math in convolutions and matrix products (10-bit mantissa)
//   bf16  bf16 activations and compute (FP32 accumulation), FP32 master weights, FP32 gradient all-reduce
#include "topology/gpu_catalog.h"

namespace layerplan {

struct MathRules {
  bool tensor_core_tf32 = false;    // cuDNN CUDNN_DEFAULT_MATH / cuBLAS CUBLAS_TF32_TENSOR_OP_MATH allowed
  bool bf16_compute = false;        // convolution and matrix-product operands in bf16
  bool fp32_master_weights = true;  // the optimizer updates FP32 weights
  bool fp32_all_reduce = true;      // weight gradients are all-reduced as FP32 (ncclFloat32)
};

MathRules math_rules(Precision precision);

}  // namespace layerplan
