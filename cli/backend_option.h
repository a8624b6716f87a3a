#pragma once
// `--backend cpu|gpu` and `--precision fp32|tf32|bf16`, the options of `layerplan train` and
// `layerplan launch` that choose where a run computes (docs/gpu-backend.md).
#include <CLI/CLI.hpp>

#include <optional>
#include <string>

#include "cli/word_option.h"
#include "common/error.h"
#include "runtime/gpu/precision.h"

namespace layerplan {

enum class Backend { kCpu, kGpu };

inline const OptionWords<Backend>& backend_words() {
  static const OptionWords<Backend> kWords = {{"cpu", Backend::kCpu}, {"gpu", Backend::kGpu}};
  return kWords;
}

inline CLI::Option* add_backend_option(CLI::App& cmd, std::optional<Backend>& backend) {
  return add_word_option(&cmd, "--backend", backend, backend_words(),
                         "cpu (oneDNN + Gloo) or gpu (cuDNN/cuBLAS + NCCL; default: $LAYERPLAN_BACKEND, else cpu)");
}

// The flag's backend, else the launcher's LAYERPLAN_BACKEND (`launcher_env`, null when
// unset), else cpu. Throws UsageError for an environment value that is neither.
inline Backend chosen_backend(const std::optional<Backend>& flag, const char* launcher_env) {
  if (flag) return *flag;
  if (launcher_env == nullptr || std::string(launcher_env).empty()) return Backend::kCpu;
  for (const auto& [word, backend] : backend_words()) {
    if (word == launcher_env) return backend;
  }
  throw UsageError(std::string("LAYERPLAN_BACKEND='") + launcher_env + "': expected cpu or gpu");
}

inline CLI::Option* add_precision_option(CLI::App& cmd, Precision& precision) {
  static const OptionWords<Precision> kWords = {
      {"fp32", Precision::kFp32}, {"tf32", Precision::kTf32}, {"bf16", Precision::kBf16}};
  return add_word_option(&cmd, "--precision", precision, kWords,
                         "GPU math: fp32 (exact FP32, no TF32), tf32 (TF32 tensor cores) or bf16 (bf16 compute, "
                         "FP32 master weights and gradient all-reduce); the CPU backend computes in fp32");
}

}  // namespace layerplan
