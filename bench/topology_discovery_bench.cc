// Time from an hwloc XML export to the planner's device graph, as the SPANK plugin pays it
// at every job start: load and read the node (hwloc), keep the job's GPUs, price the links,
// build the graph for 4 such nodes. Target: under 50 ms for a 16-GPU node
// (docs/BENCHMARKS.md).
#include <benchmark/benchmark.h>

#include <string>

#include "topology/discovery.h"
#include "topology/topology_device_graph.h"

namespace {

const std::string kTopologies = std::string(LAYERPLAN_SOURCE_DIR) + "/tests/data/topologies/";

void discover_and_build(benchmark::State& state, const std::string& file) {
  layerplan::DiscoveryOptions options;
  options.topology_xml = kTopologies + file;
  const layerplan::AdminConfig config;
  for (auto _ : state) {
    const layerplan::NodeTopology node = layerplan::discover_node(options);
    const layerplan::DeviceGraph graph = layerplan::build_device_graph(layerplan::price_links(node, config), 4, config);
    benchmark::DoNotOptimize(graph.device_count());
  }
  state.SetLabel(file);
}

void BM_Dgx2_16xV100_NvSwitch(benchmark::State& state) {
  discover_and_build(state, "hwloc-test-nvidia-dgx2-v100-nvswitch.xml");
}
void BM_XE8640_4xH100_NvLink(benchmark::State& state) {
  discover_and_build(state, "flux-dell-xe8640-4xh100-nvlink-4xndr.xml");
}
void BM_P4d_8xA100_NvSwitch(benchmark::State& state) {
  discover_and_build(state, "aws-ofi-nccl-p4d-24xlarge-8xa100-nvswitch-4xefa.xml");
}
void BM_G4dn_8xT4_Pcie(benchmark::State& state) {
  discover_and_build(state, "mpibind-aws-g4dn-metal-8xt4-pcie-efa.xml");
}

// Live discovery of the machine the benchmark runs on (hwloc reading sysfs and PCI, NVML
// when present): what a job start pays on a real node, before pricing.
void BM_ThisMachineLive(benchmark::State& state) {
  layerplan::DiscoveryOptions options;
  for (auto _ : state) {
    const layerplan::NodeTopology node = layerplan::discover_node(options);
    benchmark::DoNotOptimize(node.gpu_count());
  }
}

BENCHMARK(BM_Dgx2_16xV100_NvSwitch)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_XE8640_4xH100_NvLink)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_P4d_8xA100_NvSwitch)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_G4dn_8xT4_Pcie)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ThisMachineLive)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
