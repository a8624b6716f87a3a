// Fuzz target: a cluster file's text (topology/cluster_spec.h, docs/cluster-file.md), and the
// device graph of a cluster that reads.
#include <cstddef>
#include <cstdint>
#include <string>

#include "tests/fuzz/fuzz_input.h"
#include "topology/cluster_spec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  layerplan::fuzz::expect_clean_errors([&] {
    const layerplan::ClusterSpec spec = layerplan::cluster_from_toml(text, "fuzz.toml");
    // Large clusters are valid but their all-pairs graph is slow to build: keep runs fast.
    if (int64_t{spec.nodes} * spec.gpus_per_node <= 256) layerplan::build_device_graph(spec);
  });
  return 0;
}
