#pragma once
// Built-in figures of common data-centre GPUs (vendor datasheets, SXM variants), used
// when a cluster is described by flags or when the admin's TOML names no figures.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace layerplan {

// The training precision: fp32; tf32 (FP32 tensors, TF32 tensor-core math); bf16 and fp16
// (mixed precision: 2-byte activations, weights' copies and gradients, tensor-core math).
enum class Precision { kFp32, kTf32, kBf16, kFp16 };
// Every precision by its word, in the order help and errors list them. The one list every
// parser of a precision reads (cluster file, admin config, `layerplan plan --precision`).
const std::vector<std::pair<std::string, Precision>>& precision_words();
// Parses a word of precision_words(), case-insensitively; throws UsageError naming the value
// otherwise.
Precision parse_precision(std::string_view text);
std::string_view precision_name(Precision precision);
// Bytes of one tensor element trained at `precision`: 2 for bf16 and fp16, else 4.
int64_t precision_element_bytes(Precision precision);

struct GpuModel {
  std::string name;                    // catalog key, lower case: "p100"
  std::string full_name;               // "Tesla P100-SXM2-16GB"
  double fp32_flops = 0.0;             // dense FLOP/s
  double tf32_flops = 0.0;             // tensor-core TF32 (0 if the GPU has none: falls back to fp32)
  double bf16_flops = 0.0;             // tensor-core BF16 (0 before Ampere: the GPU has no bf16)
  double fp16_flops = 0.0;             // FP16 with FP32 accumulate: tensor cores from Volta on
  double memory_bandwidth = 0.0;       // bytes/s
  double memory_bytes = 0.0;           // the datasheet's "GB" of HBM, which are GiB
  double nvlink_pair_bandwidth = 0.0;  // bytes/s one way between two GPUs of a node
  std::string nvlink_note;             // how that figure follows from the links

  // Peak FLOP/s at `precision`. Throws UsageError naming the GPU for bf16 on a GPU without
  // bf16 (suggesting fp16), and for fp16 on one with neither an fp16 nor a bf16 figure.
  double flops(Precision precision) const;
  // Whether `precision`'s GEMMs run on tensor cores: a rate above twice the FP32 rate
  // (P100's FP16 is 2x FP32 on its CUDA cores; TF32 without tensor cores falls back to FP32).
  bool tensor_cores(Precision precision) const {
    return precision != Precision::kFp32 && flops(precision) > 2 * fp32_flops;
  }
};

const std::vector<GpuModel>& gpu_catalog();
// Looks a model up by catalog key, case-insensitively; throws UsageError listing the
// known keys otherwise.
const GpuModel& find_gpu_model(std::string_view name);

}  // namespace layerplan
