#include "cli/plan_command.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/node_options.h"
#include "cli/plan_report.h"
#include "cli/word_option.h"
#include "common/error.h"
#include "common/safe_write.h"
#include "job/device_profile.h"
#include "job/job_plan.h"
#include "model/model_file.h"
#include "planner/node_prefixes.h"
#include "planner/plan_json.h"
#include "topology/bandwidth_text.h"
#include "topology/cluster_spec.h"
#include "topology/discovery.h"

namespace layerplan {

namespace {

const OptionWords<PlacementRule> kPlacements = {{"first-block", PlacementRule::kFirstBlock},
                                                {"aligned-blocks", PlacementRule::kAlignedBlocks}};
const OptionWords<NodeRuns> kNodeRuns = {
    {"auto", NodeRuns::kAuto}, {"any", NodeRuns::kAnySplit}, {"by-samples", NodeRuns::kBySamples}};
const OptionWords<SyncScheme> kSyncSchemes = {{"ring", SyncScheme::kRingAllReduce},
                                              {"ps", SyncScheme::kParameterServer}};
const OptionWords<TensorLayout> kLayouts = {{"nhwc", TensorLayout::kChannelsLast},
                                            {"nchw", TensorLayout::kChannelsFirst}};
const OptionWords<bool> kOnOff = {{"on", true}, {"off", false}};
const OptionWords<PlanMode> kPlanModes = {{"layerwise", PlanMode::kLayerwise},
                                          {"auto", PlanMode::kAuto},
                                          {"data", PlanMode::kData},
                                          {"model", PlanMode::kModel},
                                          {"owt", PlanMode::kOwt}};

// The flags that describe the cluster by numbers.
void add_cluster_flags(CLI::App& cmd, PlanCommandArgs& args) {
  cmd.add_option("--gpus", args.gpus, "GPUs in the job, a multiple of --gpus-per-node (default 16)");
  cmd.add_option("--gpus-per-node", args.gpus_per_node, "GPUs per node (default 4)");
  cmd.add_option("--gpu", args.gpu, "GPU model: p100, p100-pcie, v100, t4, a100, h100, h200 (default p100)");
  add_word_option(&cmd, "--precision", args.precision, precision_words(),
                  "fp32, tf32, bf16 or fp16 (mixed precision on FP16 units; for GPUs without bf16) (default fp32)");
  add_word_option(&cmd, "--layout", args.layout, kLayouts,
                  "nhwc or nchw: how the framework stores activations; on nchw every tensor-core convolution "
                  "transposes its operands (default nhwc)");
  cmd.add_option("--intra-bw", args.intra_bandwidth,
                 "Bandwidth one way between two GPUs of a node, e.g. 300GB/s; a bare number is GB/s (default: the "
                 "GPU's NVLink figure). Units: Mb/s, Gb/s, Tb/s, MB/s, GB/s, TB/s (b bits, B bytes)");
  cmd.add_option("--inter-bw", args.inter_bandwidth,
                 "Bandwidth per NIC between nodes, e.g. 400Gb/s; a bare number is Gb/s (default 100Gb/s). Units as "
                 "--intra-bw");
  cmd.add_option("--nics-per-node", args.nics_per_node, "NICs each node uses (default 1)");
  cmd.add_option("--gpu-memory-gib", args.gpu_memory_gib, "Each GPU's memory in GiB (default: the GPU model's)");
  cmd.add_option("--memory-reserve-gib", args.memory_reserve_gib,
                 "GiB of each GPU's memory a plan leaves free (default 2)");
  cmd.add_option("--cluster", args.cluster_file, "TOML file with a [cluster] table; flags override it");
}

// The flags that describe the nodes through hwloc instead.
void add_discovery_flags(CLI::App& cmd, PlanCommandArgs& args) {
  cmd.add_option("--topology-xml", args.topology_xml,
                 "Plan on nodes like this hwloc XML export (see `layerplan topo`) instead of the flag-described "
                 "cluster");
  cmd.add_flag("--this-machine", args.this_machine, "Plan on nodes like this machine (hwloc, NVML)");
  cmd.add_option("--nodes", args.nodes,
                 "With --topology-xml or --this-machine: identical nodes in the job (default 1)");
  cmd.add_option("--gpu-ids", args.gpu_ids,
                 "With --topology-xml or --this-machine: the GPUs of each node to use, e.g. 0,2 (default: "
                 "SLURM_STEP_GPUS, SLURM_JOB_GPUS or CUDA_VISIBLE_DEVICES, else all)");
  cmd.add_option("--config", args.config,
                 "With --topology-xml or --this-machine: admin TOML with GPU figures and fabric, or none for the "
                 "built-in figures (default: $LAYERPLAN_CONFIG, else /etc/slurm/layerplan.toml when present, as the "
                 "Slurm plugin reads it)");
}

}  // namespace

void add_plan_command(CLI::App& cmd, PlanCommandArgs& args) {
  cmd.add_option("--model", args.model, "Zoo model (see `layerplan models`) or model file (docs/model-format.md)")
      ->capture_default_str();
  cmd.add_option("--batch", args.batch, "Global batch (default: --batch-per-gpu x GPUs)");
  cmd.add_option("--batch-per-gpu", args.batch_per_gpu, "Images per GPU when --batch is not given")
      ->capture_default_str();
  add_cluster_flags(cmd, args);
  add_word_option(&cmd, "--placement", args.placement, kPlacements,
                  "Device blocks per tile count: first-block or aligned-blocks");
  add_word_option(&cmd, "--node-runs", args.node_runs, kNodeRuns,
                  "How a layer on some but not all nodes may split: any, by-samples (across nodes by samples "
                  "only) or auto (any up to 256 GPUs, by-samples above; the default)");
  add_word_option(&cmd, "--sync", args.sync, kSyncSchemes,
                  "Weight synchronization: ring (all-reduce, as NCCL does) or ps (a parameter server per "
                  "shard, the paper's model)");
  add_word_option(&cmd, "--overlap", args.overlap, kOnOff,
                  "Gradient buckets' all-reduces overlap the backward pass: on (as DDP and NCCL streams do) or off "
                  "(as the executor does today) (default on)");
  cmd.add_option("--time-budget", args.time_budget_s, "Seconds the search may take; past it, the best baseline");
  cmd.add_option("--min-gain", args.min_gain,
                 "The simplicity margin: data parallelism stays the choice unless another plan's step is shorter by "
                 "more than this share of its own, e.g. 0.03 for 3% (default 0.03; 0: the fastest plan)");
  cmd.add_option("--json", args.json_file, "Write the plan to this file (docs/plan-format.md)");
  add_discovery_flags(cmd, args);
  add_word_option(&cmd, "--mode", args.mode, kPlanModes,
                  "Strategy to report and write: auto (the fastest by the step timeline, default), layerwise (the "
                  "searched plan), data, model or owt");
  cmd.add_flag("-v,--verbose", args.verbose, "Also print the configurations considered per layer");
  cmd.add_option("--profile-db", args.profile_db,
                 "Measured per-layer kernel times (`layerplan predict --profile-db-out`) that replace the compute "
                 "model where they hold a layer (default: the admin config's, with --topology-xml or --this-machine)");
  add_plan_output_flags(cmd, args.outputs);
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
  if (args.precision) spec.precision = *args.precision;
  if (args.layout) spec.layout = *args.layout;
  if (args.intra_bandwidth)
    spec.intra_bandwidth_gbytes = parse_bandwidth(*args.intra_bandwidth, RateUnit::kGbytes, "--intra-bw");
  if (args.inter_bandwidth)
    spec.inter_bandwidth_gbits = parse_bandwidth(*args.inter_bandwidth, RateUnit::kGbits, "--inter-bw");
  if (args.nics_per_node) spec.nics_per_node = *args.nics_per_node;
  if (args.gpu_memory_gib) spec.gpu_memory_gib = *args.gpu_memory_gib;
  if (args.memory_reserve_gib) spec.gpu_memory_reserve_gib = *args.memory_reserve_gib;
  validate(spec);
  return spec;
}

// Plans on identical nodes discovered through hwloc; the flags that describe a cluster by
// numbers do not apply.
int run_discovered_plan(const PlanCommandArgs& args) {
  require(
      !args.gpus && !args.gpus_per_node && !args.gpu && !args.intra_bandwidth && !args.inter_bandwidth &&
          !args.nics_per_node && !args.cluster_file && !args.precision && !args.layout && !args.gpu_memory_gib &&
          !args.memory_reserve_gib,
      "--topology-xml and --this-machine describe the nodes; --gpus, --gpus-per-node, --gpu, --precision, --layout, "
      "--intra-bw, --inter-bw, --nics-per-node, --gpu-memory-gib, --memory-reserve-gib and --cluster describe a "
      "cluster by numbers: use one or the other (the admin config sets the memory of discovered nodes)");
  require(!(args.topology_xml && args.this_machine), "--topology-xml and --this-machine: expected one of them");
  const ChosenAdminConfig chosen = admin_config_from(args.config);
  const AdminConfig& config = chosen.config;
  DiscoveryOptions discovery;
  discovery.topology_xml = args.this_machine ? "" : *args.topology_xml;
  discovery.sysfs_root = sysfs_root_from_env();
  if (args.gpu_ids) discovery.gpu_indices = parse_gpu_ids(*args.gpu_ids, "--gpu-ids");
  discovery.env = GpuEnvironment::from_process();
  JobRequest request;
  request.mode = args.mode;
  request.model = args.model;
  request.nodes = args.nodes.value_or(1);
  request.batch = args.batch;
  request.time_budget_s = args.time_budget_s;
  request.overlap = args.overlap;
  request.profile_db = args.profile_db;
  request.min_gain = args.min_gain ? parse_min_gain(*args.min_gain, "--min-gain") : config.slurm.min_gain;
  const NodeTopology node = discover_node(discovery);
  require(node.gpu_count() > 0, "no NVIDIA GPU in " + node.origin + " (see `layerplan topo`): nothing to plan for");
  if (!args.batch) request.batch = args.batch_per_gpu * request.nodes * node.gpu_count();
  const JobPlan job = plan_job(request, node, config);
  std::ostringstream text;
  print_plan_report(text, job.plan, job.graph, job.devices, args.verbose);
  std::cout << text.str() << admin_config_line(chosen.choice) << "\n";
  for (const std::string& note : node.notes) std::cout << "note: " << note << "\n";
  if (!job.profile_note.empty()) std::cout << "note: " << job.profile_note << "\n";
  if (!job.warning.empty()) std::cerr << "layerplan: warning: " << job.warning << "\n";
  if (args.json_file) {
    write_file_safely(*args.json_file, job.json, "--json");
    std::cout << "plan written to " << *args.json_file << "\n";
  }
  PlanOptions options;
  options.sync = args.sync;
  options.profile = job.profile;
  options.min_gain = request.min_gain;
  write_plan_outputs(std::cout, args.outputs, job.plan, job.graph, job.devices, text.str(),
                     node_scaling_cases(node, config, args.model, job.plan.batch / job.devices.device_count()),
                     options);
  return 0;
}

}  // namespace

int run_plan_command(const PlanCommandArgs& args) {
  check_plan_output_args(args.outputs);
  require(args.batch_per_gpu >= 1, "--batch-per-gpu " + std::to_string(args.batch_per_gpu) + ": expected 1 or more");
  if (args.time_budget_s) {
    require(*args.time_budget_s > 0,
            "--time-budget " + std::to_string(*args.time_budget_s) + ": expected a positive number of seconds");
  }
  // Checked before the discovery and the plan, so that a bad value writes nothing.
  if (args.min_gain) parse_min_gain(*args.min_gain, "--min-gain");
  if (args.topology_xml || args.this_machine) return run_discovered_plan(args);
  require(!args.nodes && !args.gpu_ids && !args.config,
          "--nodes, --gpu-ids and --config go with --topology-xml or --this-machine");
  const ClusterSpec spec = cluster_from_args(args);
  const int gpus = spec.nodes * spec.gpus_per_node;
  const int64_t batch = args.batch.value_or(args.batch_per_gpu * gpus);
  require(batch >= 1, "--batch " + std::to_string(batch) + ": expected 1 or more");
  PlanOptions options;
  options.space.placement = args.placement;
  options.space.node_runs = args.node_runs;
  options.time_budget_s = args.time_budget_s;
  options.sync = args.sync;
  options.overlap = args.overlap;
  if (args.min_gain) options.min_gain = parse_min_gain(*args.min_gain, "--min-gain");
  const ModelGraph graph = resolve_model(args.model, {}, batch);
  const DeviceGraph devices = build_device_graph(spec);
  options.profile = load_device_profile(args.profile_db.value_or(""), devices.device(), spec.precision);
  Plan plan = make_plan(graph, devices, options);
  if (!plan.fell_back()) {  // a fall-back keeps the best baseline, with its warning
    std::string unused;
    choose_for_mode(plan, args.mode, graph, devices, options, unused);
  } else {
    plan.min_gain = options.min_gain;
    record_idle_devices(plan, graph, devices, options);
  }
  std::ostringstream text;
  print_plan_report(text, plan, graph, devices, args.verbose);
  std::cout << text.str();
  if (options.profile) std::cout << "note: " << profile_note(graph, plan.chosen, *options.profile) << "\n";
  if (!plan.warning.empty()) std::cerr << "layerplan: warning: " << plan.warning << "\n";
  if (args.json_file) {
    write_file_safely(*args.json_file, plan_to_json(plan, graph, devices), "--json");
    std::cout << "plan written to " << *args.json_file << "\n";
  }
  write_plan_outputs(std::cout, args.outputs, plan, graph, devices, text.str(),
                     cluster_scaling_cases(spec, args.model, batch / gpus), options);
  return 0;
}

}  // namespace layerplan
