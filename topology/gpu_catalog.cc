#include "topology/gpu_catalog.h"

#include "common/error.h"
#include "common/text.h"

namespace layerplan {

namespace {
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr double kGB = 1e9;
constexpr double kT = 1e12;

}  // namespace

const std::vector<std::pair<std::string, Precision>>& precision_words() {
  static const std::vector<std::pair<std::string, Precision>> words = {
      {"fp32", Precision::kFp32}, {"tf32", Precision::kTf32}, {"bf16", Precision::kBf16}, {"fp16", Precision::kFp16}};
  return words;
}

Precision parse_precision(std::string_view text) {
  const std::string p = ascii_lower(text);
  std::string expected;
  const auto& words = precision_words();
  for (size_t i = 0; i < words.size(); ++i) {
    if (words[i].first == p) return words[i].second;
    expected += (i == 0 ? "" : i + 1 == words.size() ? " or " : ", ") + words[i].first;
  }
  throw UsageError("unknown precision '" + std::string(text) + "': expected " + expected);
}

std::string_view precision_name(Precision precision) {
  for (const auto& [word, p] : precision_words()) {
    if (p == precision) return word;
  }
  return "fp32";
}

int64_t precision_element_bytes(Precision precision) {
  return precision == Precision::kBf16 || precision == Precision::kFp16 ? 2 : 4;
}

double GpuModel::flops(Precision precision) const {
  switch (precision) {
    case Precision::kFp32:
      return fp32_flops;
    case Precision::kTf32:
      return tf32_flops > 0 ? tf32_flops : fp32_flops;
    case Precision::kBf16:
      if (bf16_flops > 0) return bf16_flops;
      throw UsageError("precision bf16: " + full_name + " has no bf16 support; use fp16 (mixed precision on its " +
                       "FP16 units)");
    case Precision::kFp16:
      if (fp16_flops > 0) return fp16_flops;
      if (bf16_flops > 0) return bf16_flops;  // Ampere on: the tensor cores' FP16 and BF16 rates are equal
      throw UsageError("precision fp16: no FP16 figure for " + full_name + ": expected fp16_tflops");
  }
  return fp32_flops;
}

const std::vector<GpuModel>& gpu_catalog() {
  // NVLink per pair: per-link one-way rate times the links between a pair in the usual
  // 4- or 8-GPU board (NVSwitch boards: a GPU's whole NVLink rate to any peer).
  static const std::vector<GpuModel> catalog = {
      {"p100", "Tesla P100-SXM2-16GB", 10.6 * kT, 0, 0, 21.2 * kT, 732 * kGB, 16 * kGiB, 20 * kGB,
       "NVLink 1.0, 20 GB/s per link, one link per GPU pair (DGX-1 cube mesh)"},
      {"p100-pcie", "Tesla P100-PCIE-16GB", 9.3 * kT, 0, 0, 18.7 * kT, 732 * kGB, 16 * kGiB, 12 * kGB,
       "no NVLink: PCIe Gen3 x16, about 12 GB/s achievable"},
      {"v100", "Tesla V100-SXM2-32GB", 15.7 * kT, 0, 0, 125 * kT, 900 * kGB, 32 * kGiB, 50 * kGB,
       "NVLink 2.0, 25 GB/s per link, two links per GPU pair (4-GPU all-to-all)"},
      {"t4", "Tesla T4", 8.1 * kT, 0, 0, 65 * kT, 320 * kGB, 16 * kGiB, 12 * kGB,
       "no NVLink: PCIe Gen3 x16, about 12 GB/s achievable"},
      {"a100", "A100-SXM4-80GB", 19.5 * kT, 156 * kT, 312 * kT, 312 * kT, 2039 * kGB, 80 * kGiB, 300 * kGB,
       "NVLink 3.0 through NVSwitch, 12 links x 25 GB/s"},
      {"h100", "H100-SXM5-80GB", 67 * kT, 494.7 * kT, 989.4 * kT, 989.4 * kT, 3350 * kGB, 80 * kGiB, 450 * kGB,
       "NVLink 4.0 through NVSwitch, 18 links x 25 GB/s"},
      {"h200", "H200-SXM-141GB", 67 * kT, 494.7 * kT, 989.4 * kT, 989.4 * kT, 4800 * kGB, 141 * kGiB, 450 * kGB,
       "NVLink 4.0 through NVSwitch, 18 links x 25 GB/s"},
  };
  return catalog;
}

const GpuModel& find_gpu_model(std::string_view name) {
  const std::string key = ascii_lower(name);
  std::string known;
  for (const GpuModel& m : gpu_catalog()) {
    if (m.name == key) return m;
    known += (known.empty() ? "" : ", ") + m.name;
  }
  throw UsageError("unknown GPU '" + std::string(name) + "': expected one of " + known);
}

}  // namespace layerplan
