// Fuzz target: a model file's text (model/model_file.h, docs/model-format.md). A model that
// reads must also survive being written and read back.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "model/model_file.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  layerplan::fuzz::expect_clean_errors([&] {
    const layerplan::ModelGraph graph = layerplan::model_from_json(text, 4, "fuzz.json");
    const std::string again = layerplan::model_to_json(graph);
    try {
      layerplan::model_from_json(again, 4, "written");
    } catch (const layerplan::UsageError&) {
      std::abort();  // the writer wrote what the reader refuses
    }
  });
  return 0;
}
