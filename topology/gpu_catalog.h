#pragma once
// Built-in figures of common data-centre GPUs (vendor datasheets, SXM variants), used
// when a cluster is described by flags or when the admin's TOML names no figures.
#include <string>
#include <string_view>
#include <vector>

namespace layerplan {

enum class Precision { kFp32, kTf32, kBf16 };
// Parses "fp32", "tf32" or "bf16"; throws UsageError naming the value otherwise.
Precision parse_precision(std::string_view text);
std::string_view precision_name(Precision precision);

struct GpuModel {
  std::string name;                    // catalog key, lower case: "p100"
  std::string full_name;               // "Tesla P100-SXM2-16GB"
  double fp32_flops = 0.0;             // dense FLOP/s
  double tf32_flops = 0.0;             // tensor-core TF32 (0 if the GPU has none: falls back to fp32)
  double bf16_flops = 0.0;             // tensor-core BF16 (0 before Ampere: falls back to fp32)
  double memory_bandwidth = 0.0;       // bytes/s
  double memory_bytes = 0.0;           // the datasheet's "GB" of HBM, which are GiB
  double nvlink_pair_bandwidth = 0.0;  // bytes/s one way between two GPUs of a node
  std::string nvlink_note;             // how that figure follows from the links

  double flops(Precision precision) const;
};

const std::vector<GpuModel>& gpu_catalog();
// Looks a model up by catalog key, case-insensitively; throws UsageError listing the
// known keys otherwise.
const GpuModel& find_gpu_model(std::string_view name);

}  // namespace layerplan
