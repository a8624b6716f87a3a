// Fuzz target: an hwloc XML export (topology/hwloc_reader.h): layerplan's checks, then
// hwloc 2.9's import, then what layerplan reads from the topology.
//
// hwloc loads its components (its dlopen'd plugins: libxml2's XML backend, PCI, OpenCL, GL)
// when the first topology of a process is initialised and unloads them when the last one is
// destroyed. A `layerplan` process reads one export, so it loads them once; without the
// topology held here the fuzzer would dlopen and dlclose them for every input, which took
// most of its time (docs/BENCHMARKS.md, "Fuzzing"). Holding it changes no code path of the
// import: the same components, libxml2's backend included, read every input.
#include <hwloc.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "tests/fuzz/fuzz_input.h"
#include "topology/hwloc_reader.h"

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  static hwloc_topology_t components_holder = nullptr;
  if (hwloc_topology_init(&components_holder) != 0) std::abort();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  layerplan::fuzz::expect_clean_errors([&] { layerplan::hwloc_from_xml_text(text, "fuzz.xml"); });
  return 0;
}
