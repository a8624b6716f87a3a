// Fuzz target: the admin config's text (topology/admin_config.h, docs/admin-config.md).
#include <cstddef>
#include <cstdint>
#include <string>

#include "tests/fuzz/fuzz_input.h"
#include "topology/admin_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  layerplan::fuzz::expect_clean_errors([&] {
    const layerplan::AdminConfig config = layerplan::admin_config_from_toml(text, "fuzz.toml");
    layerplan::validate(config.slurm);
    layerplan::figures_for_gpu(config, "NVIDIA H100 80GB HBM3");
  });
  return 0;
}
