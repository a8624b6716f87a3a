// Predicted data-parallel scaling efficiency (images/s on N GPUs over N x images/s on one
// GPU, at the same images per GPU) on H100 nodes of 8 GPUs with 8 x 400 Gb/s NICs, beside
// NCCL's model's time for one all-reduce of all the model's gradients over the N GPUs.
//
//   build/bench/data_parallel_scaling [--models resnet50,vgg16] [--gpus 8,64,256,1024]
//                                     [--batch-per-gpu 32]
//
// Prints one row per model and GPU count: the step by the timeline with the bucket
// all-reduces overlapping the backward and without, the efficiency of each, the buckets'
// summed all-reduce time, and the single all-reduce with the algorithm NCCL would pick.
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "model/layer_math.h"
#include "model/zoo.h"
#include "planner/planner.h"
#include "topology/cluster_spec.h"

namespace {

using namespace layerplan;

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) out.push_back(item);
  return out;
}

DeviceGraph h100_nodes(int gpus) {
  ClusterSpec spec;
  spec.gpu = "h100";
  spec.gpus_per_node = gpus < 8 ? gpus : 8;
  spec.nodes = gpus / spec.gpus_per_node;
  spec.inter_bandwidth_gbits = 400;
  spec.nics_per_node = 8;
  return build_device_graph(spec);
}

StrategyCost data_parallel_step(const std::string& model, int gpus, int64_t per_gpu, bool overlap) {
  const ModelGraph graph = build_zoo_model(model, per_gpu * gpus);
  const DeviceGraph devices = h100_nodes(gpus);
  const CostModel cost(graph, devices, SyncOptions{SyncScheme::kRingAllReduce, overlap});
  return price_strategy(cost, "data parallel", data_parallel(graph, gpus));
}

void print_row(const std::string& model, int gpus, int64_t per_gpu) {
  const double one = data_parallel_step(model, 1, per_gpu, true).step_s();
  const StrategyCost on = data_parallel_step(model, gpus, per_gpu, true);
  const StrategyCost off = data_parallel_step(model, gpus, per_gpu, false);
  const ModelGraph graph = build_zoo_model(model, per_gpu);
  const DeviceGraph devices = h100_nodes(gpus);
  const CostModel cost(graph, devices);
  const auto bytes = static_cast<double>(parameter_count(graph) * devices.device().bytes_per_element);
  std::vector<int> all(static_cast<size_t>(gpus));
  for (int d = 0; d < gpus; ++d) all[static_cast<size_t>(d)] = d;
  const CollectiveEstimate whole = cost.all_reduce(all, bytes, {});
  std::printf("%-10s %5d %9.2f %9.2f %7.1f%% %9.2f %7.1f%% %8d %9.2f %9.2f %9.1f %8.3f  %s/%s\n", model.c_str(), gpus,
              one * 1e3, on.step_s() * 1e3, 100 * one / on.step_s(), off.step_s() * 1e3, 100 * one / off.step_s(),
              on.timeline.sync_jobs, on.timeline.sync_s * 1e3, on.timeline.exposed_sync_s * 1e3, bytes / 1e6,
              whole.time_s * 1e3, std::string(algorithm_name(whole.algorithm)).c_str(),
              std::string(protocol_name(whole.protocol)).c_str());
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> models = {"resnet50", "vgg16"};
  std::vector<int> gpus = {8, 64, 256, 1024};
  int64_t per_gpu = 32;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--models") {
      models = split(value);
    } else if (flag == "--gpus") {
      gpus.clear();
      for (const std::string& g : split(value)) gpus.push_back(std::stoi(g));
    } else if (flag == "--batch-per-gpu") {
      per_gpu = std::stoll(value);
    } else {
      std::fprintf(stderr, "data_parallel_scaling: unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  std::printf("%-10s %5s %9s %9s %8s %9s %8s %8s %9s %9s %9s %8s  %s\n", "model", "GPUs", "1-GPU ms", "step ms", "eff",
              "no-ovl ms", "eff", "buckets", "sync ms", "exposed", "grad MB", "AR ms", "NCCL algo");
  for (const std::string& m : models) {
    for (const int g : gpus) print_row(m, g, per_gpu);
  }
  return 0;
}
