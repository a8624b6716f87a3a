// Fuzz target: a safetensors file (runtime/safetensors.h): the header, then every tensor
// read whole and by rows. The reader reads by range from a file, so the input is held in
// a memory file.
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "runtime/safetensors.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static layerplan::fuzz::MemoryFile file("fuzz.safetensors");
  const std::string& path = file.hold(data, size);
  layerplan::fuzz::expect_clean_errors([&] {
    const layerplan::safetensors::Reader reader(path);
    for (const auto& [name, info] : reader.tensors()) {
      reader.read(name);
      if (!info.shape.empty()) reader.read_rows(name, std::min<int64_t>(1, info.shape[0]), info.shape[0] > 1 ? 1 : 0);
    }
  });
  return 0;
}
