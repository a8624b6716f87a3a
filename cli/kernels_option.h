#pragma once
// `--kernels onednn|reference`, the option `layerplan train` and `layerplan predict` share.
#include <CLI/CLI.hpp>

#include "cli/word_option.h"
#include "runtime/kernels/kernels.h"

namespace layerplan {

inline CLI::Option* add_kernels_option(CLI::App& cmd, KernelBackend& backend) {
  static const OptionWords<KernelBackend> kWords = {{"onednn", KernelBackend::kOnednn},
                                                    {"reference", KernelBackend::kReference}};
  return add_word_option(&cmd, "--kernels", backend, kWords, "onednn or reference");
}

}  // namespace layerplan
