#include "topology/gpu_catalog.h"

#include <algorithm>
#include <cctype>

#include "common/error.h"

namespace layerplan {

namespace {
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr double kGB = 1e9;
constexpr double kT = 1e12;

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  return out;
}
}  // namespace

Precision parse_precision(std::string_view text) {
  const std::string p = lower(text);
  if (p == "fp32") return Precision::kFp32;
  if (p == "tf32") return Precision::kTf32;
  if (p == "bf16") return Precision::kBf16;
  throw UsageError("unknown precision '" + std::string(text) + "': expected fp32, tf32 or bf16");
}

std::string_view precision_name(Precision precision) {
  switch (precision) {
    case Precision::kFp32:
      return "fp32";
    case Precision::kTf32:
      return "tf32";
    case Precision::kBf16:
      return "bf16";
  }
  return "fp32";
}

double GpuModel::flops(Precision precision) const {
  switch (precision) {
    case Precision::kFp32:
      return fp32_flops;
    case Precision::kTf32:
      return tf32_flops > 0 ? tf32_flops : fp32_flops;
    case Precision::kBf16:
      return bf16_flops > 0 ? bf16_flops : fp32_flops;
  }
  return fp32_flops;
}

const std::vector<GpuModel>& gpu_catalog() {
  // NVLink per pair: per-link one-way rate times the links between a pair in the usual
  // 4- or 8-GPU board (NVSwitch boards: a GPU's whole NVLink rate to any peer).
  static const std::vector<GpuModel> catalog = {
      {"p100", "Tesla P100-SXM2-16GB", 10.6 * kT, 0, 0, 732 * kGB, 16 * kGiB, 20 * kGB,
       "NVLink 1.0, 20 GB/s per link, one link per GPU pair (DGX-1 cube mesh)"},
      {"v100", "Tesla V100-SXM2-32GB", 15.7 * kT, 0, 0, 900 * kGB, 32 * kGiB, 50 * kGB,
       "NVLink 2.0, 25 GB/s per link, two links per GPU pair (4-GPU all-to-all)"},
      {"t4", "Tesla T4", 8.1 * kT, 0, 0, 320 * kGB, 16 * kGiB, 12 * kGB,
       "no NVLink: PCIe Gen3 x16, about 12 GB/s achievable"},
      {"a100", "A100-SXM4-80GB", 19.5 * kT, 156 * kT, 312 * kT, 2039 * kGB, 80 * kGiB, 300 * kGB,
       "NVLink 3.0 through NVSwitch, 12 links x 25 GB/s"},
      {"h100", "H100-SXM5-80GB", 67 * kT, 494.7 * kT, 989.4 * kT, 3350 * kGB, 80 * kGiB, 450 * kGB,
       "NVLink 4.0 through NVSwitch, 18 links x 25 GB/s"},
      {"h200", "H200-SXM-141GB", 67 * kT, 494.7 * kT, 989.4 * kT, 4800 * kGB, 141 * kGiB, 450 * kGB,
       "NVLink 4.0 through NVSwitch, 18 links x 25 GB/s"},
  };
  return catalog;
}

const GpuModel& find_gpu_model(std::string_view name) {
  const std::string key = lower(name);
  std::string known;
  for (const GpuModel& m : gpu_catalog()) {
    if (m.name == key) return m;
    known += (known.empty() ? "" : ", ") + m.name;
  }
  throw UsageError("unknown GPU '" + std::string(name) + "': expected one of " + known);
}

}  // namespace layerplan
