// Fuzz target: the link figures `layerplan predict --link` reads (predict/link_figures.h),
// and the prices they give.
#include <cstddef>
#include <cstdint>
#include <string>

#include "predict/link_figures.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  layerplan::fuzz::expect_clean_errors([&] {
    const layerplan::LinkFigures link = layerplan::link_figures_from_json(text, "fuzz.json");
    for (double gap : {0.0, 1e-4, 1.0}) {
      for (double bytes : {0.0, 4.0, 1e6, 1e9}) {
        link.message_s(gap, bytes);
        link.exchange_s(gap, bytes, 3);
        link.gather_s(gap, bytes, 3);
      }
    }
  });
  return 0;
}
