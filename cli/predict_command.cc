#include "cli/predict_command.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/plan_file.h"
#include "cli/train_data.h"
#include "common/error.h"
#include "planner/cost_model.h"
#include "runtime/executor/executor.h"
#include "runtime/executor/in_process_transport.h"
#include "runtime/heap_tuning.h"
#include "topology/cluster_spec.h"

namespace layerplan {

CLI::App* add_predict_command(CLI::App& app, PredictCommandArgs& args) {
  CLI::App* sub = app.add_subcommand(
      "predict", "Predict a plan's step time on this CPU: its tiles' compute measured here, communication priced");
  sub->add_option("--plan", args.plan, "Plan file (default: $LAYERPLAN_PLAN)");
  sub->add_option("--model", args.model, "Model the plan must be for (default: the plan's)");
  sub->add_option("--model-path", args.model_path, "Folders searched for model files");
  sub->add_option("--steps", args.steps, "Steps to time; the first warms up and is not counted")->capture_default_str();
  sub->add_option("--core-share", args.core_share,
                  "Share of its cores each rank gets (cores / ranks when ranks outnumber cores)")
      ->capture_default_str();
  sub->add_option("--link-gbytes", args.link_gbytes, "GB/s one way between two ranks (bench/gloo_link_bench)")
      ->required();
  sub->add_option("--link-latency-us", args.link_latency_us, "Latency of one message between two ranks, µs")
      ->required();
  sub->add_option("--kernels", args.kernels, "onednn or reference")->capture_default_str();
  sub->add_option("--json", args.json, "Also write the prediction to this file");
  sub->add_flag("-v,--verbose", args.verbose, "Print every layer's share");
  return sub;
}

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

}  // namespace

int run_predict_command(const PredictCommandArgs& args) {
  const PlanFile file = read_plan_file(args.plan);
  const ModelAndPlan loaded = model_and_plan(file, args.model, args.model_path);
  const ModelGraph& graph = loaded.graph;
  require(args.steps >= 2, "--steps " + std::to_string(args.steps) + ": expected 2 or more (the first warms up)");
  require(args.core_share > 0 && args.core_share <= 1,
          "--core-share " + std::to_string(args.core_share) + ": expected a fraction in (0, 1]");
  require(std::isfinite(args.link_gbytes) && args.link_gbytes > 0,
          "--link-gbytes " + std::to_string(args.link_gbytes) + ": expected a positive bandwidth");
  require(std::isfinite(args.link_latency_us) && args.link_latency_us >= 0,
          "--link-latency-us " + std::to_string(args.link_latency_us) + ": expected 0 or more");
  require(args.kernels == "onednn" || args.kernels == "reference",
          "--kernels " + args.kernels + ": expected onednn or reference");
  if (args.json) {
    // Written only once the prediction is made; an existing file is kept until then.
    const std::filesystem::path dir = std::filesystem::absolute(*args.json).parent_path();
    require(std::filesystem::is_directory(dir), "--json '" + *args.json + "': no directory " + dir.string());
  }

  // The ranks as devices of one node joined by the measured link.
  ClusterSpec spec;
  spec.nodes = 1;
  spec.gpus_per_node = file.devices;
  spec.intra_bandwidth_gbytes = args.link_gbytes;
  spec.intra_latency_us = args.link_latency_us;
  validate(spec);
  const DeviceGraph devices = build_device_graph(spec);
  const CostModel cost(graph, devices);

  // Every tile in this process, one after another, each timed per layer and device.
  keep_freed_memory_in_process();
  const auto kernels = make_kernels(args.kernels);
  InProcessTransport transport;
  ExecutorOptions options;
  options.time_compute = true;
  Executor executor(graph, loaded.plan, *kernels, transport, options);
  const Shape& input = graph.layer(0).output;
  DataOptions data_options;
  data_options.positions = {{0, input.n()}};
  const TrainingData data =
      load_training_data("synthetic", input, graph.layer(graph.size() - 1).output.c(), data_options);
  const EpochOrder order(data.train->samples(), input.n(), false, 1, 0);
  // The share of the batch the busiest rank assembles: the samples its input tiles cover.
  std::vector<int64_t> covered(static_cast<size_t>(file.devices), 0);
  const std::vector<Box> input_tiles = tiles(input, loaded.plan[0]);
  for (size_t t = 0; t < input_tiles.size(); ++t) {
    covered[static_cast<size_t>(loaded.plan[0].devices[t])] += input_tiles[t].dim[0].size();
  }
  const double data_share = static_cast<double>(*std::max_element(covered.begin(), covered.end())) /
                            static_cast<double>(input.n());
  using Clock = std::chrono::steady_clock;
  std::vector<std::vector<double>> per_step(static_cast<size_t>(graph.size()));  // [layer][step]: slowest device
  std::vector<double> overhead_steps, data_steps;
  for (int s = 0; s < args.steps; ++s) {
    const auto t0 = Clock::now();
    const GlobalBatch gb = assemble_batch(*data.train, order, s, input, data_options.positions);
    const auto t1 = Clock::now();
    executor.reset_compute_seconds();
    executor.step(gb.images, gb.labels);
    const auto t2 = Clock::now();
    if (s == 0) continue;
    double kernels_s = 0;
    for (int id = 0; id < graph.size(); ++id) {
      const std::vector<double>& by_device = executor.compute_seconds()[static_cast<size_t>(id)];
      per_step[static_cast<size_t>(id)].push_back(*std::max_element(by_device.begin(), by_device.end()));
      for (double d : by_device) kernels_s += d;
    }
    // What the step spent outside the kernels (copying boxes between tiles, allocating,
    // bookkeeping), shared evenly by the devices; and the busiest rank's share of making the batch.
    const double wall = std::chrono::duration<double>(t2 - t1).count();
    overhead_steps.push_back(std::max(0.0, wall - kernels_s) / file.devices);
    data_steps.push_back(std::chrono::duration<double>(t1 - t0).count() * data_share);
  }
  const double overhead = median(overhead_steps) / args.core_share;
  const double data_time = median(data_steps) / args.core_share;

  double compute = 0, transfer = 0, sync = 0;
  nlohmann::json layers = nlohmann::json::array();
  if (args.verbose) std::printf("%-28s %-24s %11s %11s %9s\n", "layer", "configuration", "compute ms", "transfer ms", "sync ms");
  for (int id = 0; id < graph.size(); ++id) {
    const Layer& layer = graph.layer(id);
    const Configuration& config = loaded.plan[static_cast<size_t>(id)];
    const double c = median(per_step[static_cast<size_t>(id)]) / args.core_share;
    double t = 0;
    for (size_t slot = 0; slot < layer.inputs.size(); ++slot) {
      t += cost.transfer(layer, static_cast<int>(slot), loaded.plan[static_cast<size_t>(layer.inputs[slot])], config)
               .time_s;
    }
    const double y = cost.sync(layer, config).time_s + cost.batch_norm_statistics_time(layer, config);
    compute += c;
    transfer += t;
    sync += y;
    layers.push_back({{"layer", layer.name}, {"compute_s", c}, {"transfer_s", t}, {"sync_s", y}});
    if (args.verbose) {
      std::printf("%-28s %-24s %11.3f %11.3f %9.3f\n", layer.name.c_str(), config.str().c_str(), 1e3 * c, 1e3 * t,
                  1e3 * y);
    }
  }
  sync += cost.loss_reduction_time(file.devices);
  const double step = compute + overhead + data_time + transfer + sync;
  std::printf("%s, batch %lld, %s plan on %d device%s: predicted step %.4f s = compute %.4f s + executor overhead "
              "%.4f s + data %.4f s (measured, median of %d steps, core share %.2f) + transfer %.4f s + sync %.4f s "
              "(priced, link %.2f GB/s, %.1f us)\n",
              graph.name().c_str(), static_cast<long long>(file.batch), file.strategy.c_str(), file.devices,
              file.devices == 1 ? "" : "s", step, compute, overhead, data_time, args.steps - 1, args.core_share,
              transfer, sync, args.link_gbytes, args.link_latency_us);
  if (args.json) {
    std::ofstream json_out(*args.json, std::ios::trunc);
    require(json_out.is_open(), "--json '" + *args.json + "' cannot be written");
    json_out << nlohmann::json{{"model", graph.name()},     {"batch", file.batch},     {"devices", file.devices},
                               {"strategy", file.strategy}, {"predicted_step_s", step}, {"compute_s", compute},
                               {"transfer_s", transfer},    {"sync_s", sync},          {"overhead_s", overhead},
                               {"data_s", data_time},       {"layers", layers}}
                    .dump(1)
             << "\n";
  }
  return 0;
}

}  // namespace layerplan
