// Fuzz target: an hwloc XML export (topology/hwloc_reader.h): layerplan's checks, then
// hwloc 2.9's import, then what layerplan reads from the topology.
#include <cstddef>
#include <cstdint>
#include <string>

#include "tests/fuzz/fuzz_input.h"
#include "topology/hwloc_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  layerplan::fuzz::expect_clean_errors([&] { layerplan::hwloc_from_xml_text(text, "fuzz.xml"); });
  return 0;
}
