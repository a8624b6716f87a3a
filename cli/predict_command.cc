#include "cli/predict_command.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "predict/link_figures.h"
#include "model/plan_file.h"
#include "predict/measurement.h"
#include "common/error.h"
#include "planner/cost_model.h"
#include "model/geometry.h"
#include "runtime/executor/executor.h"
#include "runtime/executor/gradient_buckets.h"
#include "topology/cluster_spec.h"

namespace layerplan {

namespace {

// How an edge's moves go: one way (no device both sends and receives in them, as into or
// out of a layer on fewer devices), and with how many peers at most: the devices a device
// receives from when one way, else those it sends to or receives from. The link prices
// each shape apart.
struct MoveShape {
  bool one_way = true;
  int peers = 0;
  std::set<int> devices;  // those that send or receive in them
};

// Forward, or backward (the gradients go from each pair's dst back to its src: a gather
// forward scatters backward).
MoveShape move_shape(const std::vector<PairVolume>& volumes, int devices, bool backward) {
  std::vector<std::set<int>> senders(static_cast<size_t>(devices)), receivers = senders;
  for (const PairVolume& v : volumes) {
    const int from = backward ? v.dst : v.src, to = backward ? v.src : v.dst;
    senders[static_cast<size_t>(to)].insert(from);
    receivers[static_cast<size_t>(from)].insert(to);
  }
  MoveShape shape;
  for (const PairVolume& v : volumes) shape.devices.insert({v.src, v.dst});
  for (size_t d = 0; d < senders.size(); ++d) {
    if (!senders[d].empty() && !receivers[d].empty()) shape.one_way = false;
  }
  for (size_t d = 0; d < senders.size(); ++d) {
    std::set<int> peers = senders[d];
    if (!shape.one_way) peers.insert(receivers[d].begin(), receivers[d].end());
    shape.peers = std::max(shape.peers, static_cast<int>(peers.size()));
  }
  return shape;
}

}  // namespace

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
  sub->add_option("--link", args.link,
                  "The link between ranks as bench/gloo_link_bench --json measures it with the plan's rank "
                  "count: bandwidth, and each message's time by the compute before it");
  sub->add_option("--link-gbytes", args.link_gbytes, "Instead of --link: GB/s one way between two ranks");
  sub->add_option("--link-latency-us", args.link_latency_us,
                  "Instead of --link: the time of every message between two ranks, µs");
  sub->add_option("--kernels", args.kernels, "onednn or reference")->capture_default_str();
  sub->add_option("--json", args.json, "Also write the prediction to this file");
  sub->add_flag("-v,--verbose", args.verbose, "Print every layer's share");
  return sub;
}

int run_predict_command(const PredictCommandArgs& args) {
  const PlanFile file = read_plan_file(args.plan);
  const ModelAndPlan loaded = model_and_plan(file, args.model, args.model_path);
  const ModelGraph& graph = loaded.graph;
  require(args.steps >= 2, "--steps " + std::to_string(args.steps) + ": expected 2 or more (the first warms up)");
  require(args.core_share > 0 && args.core_share <= 1,
          "--core-share " + std::to_string(args.core_share) + ": expected a fraction in (0, 1]");
  LinkFigures link;
  if (args.link) {
    require(!args.link_gbytes && !args.link_latency_us,
            "--link and --link-gbytes/--link-latency-us: expected one or the other");
    link = read_link_figures(*args.link);
  } else {
    require(args.link_gbytes && args.link_latency_us,
            "--link-gbytes and --link-latency-us (or --link FILE): the link between ranks is needed");
    require(std::isfinite(*args.link_gbytes) && *args.link_gbytes > 0,
            "--link-gbytes " + std::to_string(*args.link_gbytes) + ": expected a positive bandwidth");
    require(std::isfinite(*args.link_latency_us) && *args.link_latency_us >= 0,
            "--link-latency-us " + std::to_string(*args.link_latency_us) + ": expected 0 or more");
    link.gbytes = *args.link_gbytes;
    link.latency_s = 1e-6 * *args.link_latency_us;
  }
  require(args.kernels == "onednn" || args.kernels == "reference",
          "--kernels " + args.kernels + ": expected onednn or reference");
  if (args.json) {
    // Written only once the prediction is made; an existing file is kept until then.
    const std::filesystem::path dir = std::filesystem::absolute(*args.json).parent_path();
    require(std::filesystem::is_directory(dir), "--json '" + *args.json + "': no directory " + dir.string());
  }

  // The ranks as devices of one node joined by the measured link. The cost model prices the
  // bytes; every message's time is added below, by the compute before it.
  ClusterSpec spec;
  spec.nodes = 1;
  spec.gpus_per_node = file.devices;
  spec.intra_bandwidth_gbytes = link.gbytes;
  spec.intra_latency_us = 0;
  validate(spec);
  const DeviceGraph devices = build_device_graph(spec);
  const CostModel cost(graph, devices);

  const bool launched = std::getenv("LAYERPLAN_RANK") != nullptr;
  require(!launched || args.core_share == 1.0,
          "--core-share " + std::to_string(args.core_share) + ": under layerplan launch the ranks share the cores "
          "themselves; leave it at 1");
  const MeasuredSteps measured =
      launched ? measure_as_ranks(graph, loaded.plan, file.devices, args.steps, args.kernels)
               : measure_in_one_process(graph, loaded.plan, file.devices, args.steps, args.core_share, args.kernels);
  if (!measured.prints) return 0;
  const double overhead = measured.overhead_s;
  const double data_time = measured.data_s;

  // The executor's messages in the order it sends them, all devices in step: each costs the
  // link's time for a message of its size after the compute since the previous one (the
  // busiest device's), plus its bytes as the cost model prices them.
  const std::vector<GradientBucket> buckets =
      gradient_buckets(graph, loaded.plan, bucket_cap_elements(ExecutorOptions{}.gradient_bucket_bytes));
  const auto n = static_cast<size_t>(graph.size());
  const std::vector<double>& compute_s = measured.compute_s;
  std::vector<double> forward_s(n), transfer_s(n, 0.0), sync_s(n, 0.0);
  for (size_t id = 0; id < n; ++id) forward_s[id] = std::min(compute_s[id], measured.forward_s[id]);
  double gap = 0, messages = 0;
  std::vector<double> layer_messages(n, 0.0);  // those of its input edges and its statistics
  // A message of `bytes` (what the busiest rank sends in it) after the compute gap, for
  // layer `id` (n: none). The cost model prices the bytes themselves, without latency here,
  // so the bytes of a price are its seconds times the bandwidth.
  const double bytes_per_s = 1e9 * link.gbytes;
  const auto message = [&](size_t id, double bytes, const MoveShape& shape = {false, 1, {}}) {
    const double t = shape.one_way ? link.gather_s(gap, bytes, shape.peers) : link.exchange_s(gap, bytes, shape.peers);
    gap = 0;
    messages += 1;
    if (id < n) layer_messages[id] += 1;
    return t;
  };
  // Each input edge's bytes, both ways (a message each way where they are not 0), its moves'
  // shape each way, and each layer's batch-norm statistics, both ways (0: none reduced).
  std::vector<std::vector<TransferCost>> edges(n);
  std::vector<std::vector<MoveShape>> forward_shapes(n), backward_shapes(n);
  std::vector<double> statistics_s(n);
  for (size_t id = 0; id < n; ++id) {
    const Layer& layer = graph.layer(static_cast<int>(id));
    for (size_t slot = 0; slot < layer.inputs.size(); ++slot) {
      const Configuration& producer = loaded.plan[static_cast<size_t>(layer.inputs[slot])];
      edges[id].push_back(cost.transfer(layer, static_cast<int>(slot), producer, loaded.plan[id]));
      const std::vector<PairVolume> volumes =
          transfer_volumes(graph, layer, static_cast<int>(slot), producer, loaded.plan[id]);
      forward_shapes[id].push_back(move_shape(volumes, file.devices, false));
      backward_shapes[id].push_back(move_shape(volumes, file.devices, true));
    }
    statistics_s[id] = cost.batch_norm_statistics_time(layer, loaded.plan[id]);
  }
  // Whether each device has computed since its last message (see the loss below).
  std::vector<bool> computed(static_cast<size_t>(file.devices), false);
  // Layer `id` computing for one pass (forward or backward), its statistics reduced halfway.
  const auto compute_pass = [&](size_t id, double seconds) {
    for (int d : loaded.plan[id].devices) computed[static_cast<size_t>(d)] = computed[static_cast<size_t>(d)] || seconds > 0;
    if (statistics_s[id] > 0) {
      gap += seconds / 2;
      sync_s[id] += statistics_s[id] / 2 + message(id, statistics_s[id] / 2 * bytes_per_s);
      gap += seconds / 2;
    } else {
      gap += seconds;
    }
  };
  // One pass of layer `id`'s input edges: half of their bytes, and their messages.
  const auto edge_pass = [&](size_t id, bool backward) {
    const std::vector<MoveShape>& shapes = backward ? backward_shapes[id] : forward_shapes[id];
    for (size_t slot = 0; slot < edges[id].size(); ++slot) {
      const TransferCost& c = edges[id][slot];
      transfer_s[id] += c.time_s / 2;
      if (c.bytes == 0) continue;
      transfer_s[id] += message(id, c.time_s / 2 * bytes_per_s, shapes[slot]);
      for (int d : shapes[slot].devices) computed[static_cast<size_t>(d)] = false;
    }
  };
  double weight_sync = 0, loss_sync = 0;
  // The buckets due at one point (after layer `after`, or at the end: -1), in order; a
  // bucket's ring starts once all its devices are free, so buckets of disjoint devices
  // overlap. Its first message follows the compute gap, the other 2(p-1)-1 come back to back.
  const auto reduce_buckets = [&](int after) {
    std::vector<double> busy(static_cast<size_t>(file.devices), 0.0);
    bool any = false;
    for (const GradientBucket& b : buckets) {
      if (b.reduce_after_layer != after) continue;
      double start = 0;
      bool first = true;
      for (int d : b.devices) {
        start = std::max(start, busy[static_cast<size_t>(d)]);
        first = first && busy[static_cast<size_t>(d)] == 0;
      }
      // A ring's steps are priced at the small-message figure, not the figure of their
      // chunk's size: Gloo's ring sends a chunk while it receives the next and sums the one
      // before, so the chunks' time beyond their bytes overlaps. On the 2-core VM, pricing
      // them by size put LeNet-5's 2-rank weight sync at 2.3-2.6 ms against 1.3-1.9 measured
      // and Inception-v3's at 26.9 ms against 23 (docs/BENCHMARKS.md).
      double t = cost.ring_all_reduce_time({b.devices}, 4.0 * static_cast<double>(b.elements()));
      for (size_t step = 0; step < 2 * (b.devices.size() - 1); ++step) {  // a chunk each
        t += link.message_s(step == 0 && first ? gap : 0.0);
        messages += 1;
      }
      for (int d : b.devices) busy[static_cast<size_t>(d)] = start + t;
      any = true;
    }
    if (!any) return;
    weight_sync += *std::max_element(busy.begin(), busy.end());
    gap = 0;
  };
  for (size_t id = 0; id < n; ++id) {  // forward: inputs, then computing
    edge_pass(id, false);
    compute_pass(id, forward_s[id]);
  }
  const std::vector<int> used = devices_used(loaded.plan);  // the executor reduces the loss among them
  if (used.size() > 1) {
    loss_sync = cost.loss_reduction_time(used);
    // Between two devices, one of which has waited with nothing to compute since its last
    // message, the other finds that one's part there when it arrives: a one-way message
    // back to back, not an exchange after computing (on the 2-core VM, LeNet-5's 2-rank
    // loss took 0.1-0.3 ms against 0.9 priced as an exchange; docs/BENCHMARKS.md). With
    // more devices, Gloo's all-reduce takes several rounds among them and keeps the
    // exchange's figure.
    const bool one_waited = used.size() == 2 && computed[static_cast<size_t>(used[0])] !=
                                                    computed[static_cast<size_t>(used[1])];
    if (one_waited) gap = 0;
    loss_sync += message(n, loss_sync * bytes_per_s, {one_waited, 1, {}});
  }
  for (size_t id = n; id-- > 0;) {  // backward: computing, then input gradients, then buckets due
    compute_pass(id, compute_s[id] - forward_s[id]);
    edge_pass(id, true);
    reduce_buckets(static_cast<int>(id));
  }
  reduce_buckets(-1);

  double compute = 0, transfer = 0, sync = weight_sync + loss_sync;
  nlohmann::json layers = nlohmann::json::array();
  if (args.verbose) std::printf("%-28s %-24s %11s %11s %9s\n", "layer", "configuration", "compute ms", "transfer ms", "sync ms");
  for (size_t id = 0; id < n; ++id) {
    const Layer& layer = graph.layer(static_cast<int>(id));
    compute += compute_s[id];
    transfer += transfer_s[id];
    sync += sync_s[id];
    layers.push_back({{"layer", layer.name},
                      {"compute_s", compute_s[id]},
                      {"forward_s", forward_s[id]},
                      {"transfer_s", transfer_s[id]},
                      {"sync_s", sync_s[id]},
                      {"messages", layer_messages[id]}});
    if (args.verbose) {
      std::printf("%-28s %-24s %11.3f %11.3f %9.3f\n", layer.name.c_str(), loaded.plan[id].str().c_str(),
                  1e3 * compute_s[id], 1e3 * transfer_s[id], 1e3 * sync_s[id]);
    }
  }
  if (args.verbose) {
    std::printf("%-28s %-24s %11s %11s %9.3f\n", "weight gradients",
                (std::to_string(buckets.size()) + " bucket" + (buckets.size() == 1 ? "" : "s")).c_str(), "", "",
                1e3 * weight_sync);
    std::printf("%-28s %-24s %11s %11s %9.3f\n", "loss", "", "", "", 1e3 * loss_sync);
  }
  const double step = compute + overhead + data_time + transfer + sync;
  char core_share_text[64];
  std::snprintf(core_share_text, sizeof core_share_text, "one process, core share %.2f", args.core_share);
  std::printf("%s, batch %lld, %s plan on %d device%s: predicted step %.4f s = compute %.4f s + executor overhead "
              "%.4f s + data %.4f s (measured, median of %d steps, %s) + transfer %.4f s + sync %.4f s "
              "(priced: %.0f messages, link %.2f GB/s)\n",
              graph.name().c_str(), static_cast<long long>(file.batch), file.strategy.c_str(), file.devices,
              file.devices == 1 ? "" : "s", step, compute, overhead, data_time, args.steps - 1,
              launched ? "one rank per device" : core_share_text,
              transfer, sync, messages, link.gbytes);
  if (args.json) {
    std::ofstream json_out(*args.json, std::ios::trunc);
    require(json_out.is_open(), "--json '" + *args.json + "' cannot be written");
    json_out << nlohmann::json{{"model", graph.name()},     {"batch", file.batch},     {"devices", file.devices},
                               {"strategy", file.strategy}, {"predicted_step_s", step}, {"compute_s", compute},
                               {"transfer_s", transfer},    {"sync_s", sync},          {"weight_sync_s", weight_sync},
                               {"loss_sync_s", loss_sync},  {"buckets", buckets.size()},
                               {"messages", messages},      {"overhead_s", overhead},
                               {"data_s", data_time},       {"layers", layers}}
                    .dump(1)
             << "\n";
  }
  return 0;
}

}  // namespace layerplan
