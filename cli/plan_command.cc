#include "cli/plan_command.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>

#include "cli/plan_report.h"
#include "common/error.h"
#include "planner/plan_json.h"
#include "planner/zoo.h"
#include "topology/cluster_spec.h"

namespace layerplan {

CLI::App* add_plan_command(CLI::App& app, PlanCommandArgs& args) {
  CLI::App* cmd = app.add_subcommand("plan", "Choose a configuration for every layer and compare with the baselines");
  cmd->add_option("--model", args.model, "Zoo model (see `layerplan models`)")->capture_default_str();
  cmd->add_option("--batch", args.batch, "Global batch (default: --batch-per-gpu x GPUs)");
  cmd->add_option("--batch-per-gpu", args.batch_per_gpu, "Images per GPU when --batch is not given")
      ->capture_default_str();
  cmd->add_option("--gpus", args.gpus, "GPUs in the job, a multiple of --gpus-per-node (default 16)");
  cmd->add_option("--gpus-per-node", args.gpus_per_node, "GPUs per node (default 4)");
  cmd->add_option("--gpu", args.gpu, "GPU model: p100, v100, t4, a100, h100, h200 (default p100)");
  cmd->add_option("--precision", args.precision, "fp32, tf32 or bf16 (default fp32)");
  cmd->add_option("--intra-bw", args.intra_bandwidth_gbytes,
                  "GB/s one way between two GPUs of a node (default: the GPU's NVLink figure)");
  cmd->add_option("--inter-bw", args.inter_bandwidth_gbits, "Gb/s per NIC between nodes (default 100)");
  cmd->add_option("--nics-per-node", args.nics_per_node, "NICs each node uses (default 1)");
  cmd->add_option("--cluster", args.cluster_file, "TOML file with a [cluster] table; flags override it");
  cmd->add_option("--placement", args.placement, "Device blocks per tile count: first-block or aligned-blocks")
      ->capture_default_str();
  cmd->add_option("--sync", args.sync,
                  "Weight synchronization: ring (all-reduce, as NCCL does) or ps (a parameter server per "
                  "shard, the paper's model)")
      ->capture_default_str();
  cmd->add_option("--time-budget", args.time_budget_s, "Seconds the search may take; past it, the best baseline");
  cmd->add_option("--json", args.json_file, "Write the plan to this file (docs/plan-format.md)");
  cmd->add_flag("-v,--verbose", args.verbose, "Also print the configurations considered per layer");
  return cmd;
}

namespace {

ClusterSpec cluster_from_args(const PlanCommandArgs& args) {
  ClusterSpec spec = args.cluster_file ? load_cluster_file(*args.cluster_file) : ClusterSpec::paper_cluster();
  // --gpus and --gpus-per-node each keep the other's value (from the file or the default
  // 16 GPUs in nodes of 4); the node count follows from the two.
  const int gpus = args.gpus.value_or(spec.nodes * spec.gpus_per_node);
  const int per_node = args.gpus_per_node.value_or(spec.gpus_per_node);
  require(gpus >= 1, "--gpus " + std::to_string(gpus) + ": expected 1 or more");
  require(per_node >= 1, "--gpus-per-node " + std::to_string(per_node) + ": expected 1 or more");
  // A job smaller than one node uses part of a single node.
  spec.gpus_per_node = std::min(per_node, gpus);
  require(gpus % spec.gpus_per_node == 0, "--gpus " + std::to_string(gpus) + ": expected a multiple of the " +
                                              std::to_string(spec.gpus_per_node) + " GPUs per node");
  spec.nodes = gpus / spec.gpus_per_node;
  if (args.gpu) spec.gpu = *args.gpu;
  if (args.precision) spec.precision = parse_precision(*args.precision);
  if (args.intra_bandwidth_gbytes) spec.intra_bandwidth_gbytes = *args.intra_bandwidth_gbytes;
  if (args.inter_bandwidth_gbits) spec.inter_bandwidth_gbits = *args.inter_bandwidth_gbits;
  if (args.nics_per_node) spec.nics_per_node = *args.nics_per_node;
  validate(spec);
  return spec;
}

PlacementRule parse_placement(const std::string& text) {
  if (text == "first-block") return PlacementRule::kFirstBlock;
  if (text == "aligned-blocks") return PlacementRule::kAlignedBlocks;
  throw UsageError("--placement " + text + ": expected first-block or aligned-blocks");
}

// Writes next to the target and renames, so an existing file is never left half-written.
void write_file_atomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    require(out.good(), "--json " + path + ": cannot write " + tmp);
    out << text;
    out.close();
    require(out.good(), "--json " + path + ": writing " + tmp + " failed");
  }
  require(std::rename(tmp.c_str(), path.c_str()) == 0, "--json " + path + ": cannot replace the file");
}

}  // namespace

int run_plan_command(const PlanCommandArgs& args) {
  const ClusterSpec spec = cluster_from_args(args);
  const int gpus = spec.nodes * spec.gpus_per_node;
  require(args.batch_per_gpu >= 1, "--batch-per-gpu " + std::to_string(args.batch_per_gpu) + ": expected 1 or more");
  const int64_t batch = args.batch.value_or(args.batch_per_gpu * gpus);
  require(batch >= 1, "--batch " + std::to_string(batch) + ": expected 1 or more");
  if (args.time_budget_s) {
    require(*args.time_budget_s > 0, "--time-budget " + std::to_string(*args.time_budget_s) +
                                         ": expected a positive number of seconds");
  }
  PlanOptions options;
  options.space.placement = parse_placement(args.placement);
  options.time_budget_s = args.time_budget_s;
  require(args.sync == "ring" || args.sync == "ps", "--sync " + args.sync + ": expected ring or ps");
  options.sync = args.sync == "ps" ? SyncScheme::kParameterServer : SyncScheme::kRingAllReduce;
  const ModelGraph graph = build_zoo_model(args.model, batch);
  const DeviceGraph devices = build_device_graph(spec);
  const Plan plan = make_plan(graph, devices, options);
  print_plan_report(std::cout, plan, graph, devices, args.verbose);
  if (!plan.warning.empty()) std::cerr << "layerplan: warning: " << plan.warning << "\n";
  if (args.json_file) {
    write_file_atomically(*args.json_file, plan_to_json(plan, graph, devices));
    std::cout << "plan written to " << *args.json_file << "\n";
  }
  return 0;
}

}  // namespace layerplan
