#include "predict/measurement.h"

#include <algorithm>
#include <chrono>

#include "predict/slowest_device.h"
#include "runtime/training/train_data.h"
#include "common/error.h"
#include "runtime/executor/executor.h"
#include "runtime/executor/in_process_transport.h"
#include "runtime/executor/stand_in_transport.h"
#include "runtime/gloo_communicator.h"
#include "runtime/heap_tuning.h"

namespace layerplan {
namespace {

using Clock = std::chrono::steady_clock;

// The samples of the batch that each device's input tiles cover.
std::vector<std::vector<Interval>> positions_by_device(const ModelGraph& graph, const Configuration& input_config,
                                                       int devices) {
  std::vector<std::vector<Interval>> positions(static_cast<size_t>(devices));
  const std::vector<Box> input_tiles = tiles(graph.layer(0).output, input_config);
  for (size_t t = 0; t < input_tiles.size(); ++t) {
    positions[static_cast<size_t>(input_config.devices[t])].push_back(input_tiles[t].dim[0]);
  }
  return positions;
}

// Timings of `steps` steps of `executor` (its compute timer on), the first not counted:
// per layer, device and step the compute and forward seconds, and (medians over the steps)
// the wall time outside `devices`' kernels and the time making the batch.
struct StepTimings {
  StepSeconds compute, forward;  // [layer][device][step]
  double outside_kernels = 0, data = 0;
};

StepTimings time_steps(const ModelGraph& graph, Executor& executor, const std::vector<Interval>& positions,
                       const std::vector<int>& devices, int device_count, int steps) {
  const Shape& input = graph.layer(0).output;
  DataOptions data_options;
  data_options.positions = positions;
  const TrainingData data =
      load_training_data("synthetic", input, graph.layer(graph.size() - 1).output.c(), data_options);
  // Batches made as `layerplan train` makes them by default (shuffled, seed 1).
  const EpochOrder order(data.train->samples(), input.n(), true, 1, 0);
  const auto n = static_cast<size_t>(graph.size());
  // The executor times the devices up to the highest one the plan uses; a device the plan
  // leaves idle computes nothing.
  const size_t timed_devices = executor.compute_seconds().empty() ? 0 : executor.compute_seconds()[0].size();
  const auto seconds = [&](const std::vector<std::vector<double>>& by_layer, size_t id, size_t d) {
    return d < timed_devices ? by_layer[id][d] : 0.0;
  };
  const auto width = static_cast<size_t>(device_count);
  StepSeconds compute(n, std::vector<std::vector<double>>(width)), forward = compute;
  std::vector<double> outside, making;
  for (int s = 0; s < steps; ++s) {
    const auto t0 = Clock::now();
    const GlobalBatch gb = assemble_batch(*data.train, order, s % order.batches(), input, positions);
    const auto t1 = Clock::now();
    executor.reset_compute_seconds();
    executor.step(gb.images, gb.labels);
    const auto t2 = Clock::now();
    if (s == 0) continue;
    double kernels = 0;
    for (size_t id = 0; id < n; ++id) {
      for (size_t d = 0; d < width; ++d) {
        compute[id][d].push_back(seconds(executor.compute_seconds(), id, d));
        forward[id][d].push_back(seconds(executor.forward_seconds(), id, d));
      }
      for (int d : devices) kernels += seconds(executor.compute_seconds(), id, static_cast<size_t>(d));
    }
    outside.push_back(std::max(0.0, std::chrono::duration<double>(t2 - t1).count() - kernels));
    making.push_back(std::chrono::duration<double>(t1 - t0).count());
  }
  StepTimings t;
  t.compute = std::move(compute);
  t.forward = std::move(forward);
  t.outside_kernels = median(outside);
  t.data = median(making);
  return t;
}

// The measurement's per-layer compute: each layer's slowest device (predict/slowest_device.h).
MeasuredSteps with_slowest_devices(const StepSeconds& compute, const StepSeconds& forward,
                                   const std::vector<int>& devices) {
  LayerSeconds layers = slowest_device_seconds(compute, forward, devices);
  MeasuredSteps m;
  m.compute_s = std::move(layers.compute_s);
  m.forward_s = std::move(layers.forward_s);
  return m;
}

}  // namespace

MeasuredSteps measure_in_one_process(const ModelGraph& graph, const std::vector<Configuration>& plan, int devices,
                                     int steps, double core_share, const std::string& kernel_kind) {
  keep_freed_memory_in_process();
  const auto kernels = make_kernels(kernel_kind);
  InProcessTransport transport;
  ExecutorOptions options;
  options.time_compute = true;
  Executor executor(graph, plan, *kernels, transport, options);
  const auto positions = positions_by_device(graph, plan[0], devices);
  std::vector<Interval> all = {{0, graph.layer(0).output.n()}};
  std::vector<int> every(static_cast<size_t>(devices));
  for (int d = 0; d < devices; ++d) every[static_cast<size_t>(d)] = d;
  const StepTimings t = time_steps(graph, executor, all, every, devices, steps);
  MeasuredSteps m = with_slowest_devices(t.compute, t.forward, every);
  for (size_t id = 0; id < m.compute_s.size(); ++id) {
    m.compute_s[id] /= core_share;
    m.forward_s[id] /= core_share;
  }
  // The work outside the kernels is shared evenly by the devices; the busiest device makes
  // the largest part of the batch.
  int64_t busiest = 0;
  for (const auto& p : positions) {
    int64_t samples = 0;
    for (const Interval& i : p) samples += i.size();
    busiest = std::max(busiest, samples);
  }
  m.overhead_s = t.outside_kernels / devices / core_share;
  m.data_s = t.data * static_cast<double>(busiest) / static_cast<double>(graph.layer(0).output.n()) / core_share;
  return m;
}

MeasuredSteps measure_as_ranks(const ModelGraph& graph, const std::vector<Configuration>& plan, int devices,
                               int steps, const std::string& kernel_kind) {
  const GlooOptions world = gloo_options_from_env();
  require(world.world_size == devices, "the plan is for " + std::to_string(devices) + " devices, this run has " +
                                           std::to_string(world.world_size) + " ranks: start it with `layerplan "
                                           "launch --nproc " + std::to_string(devices) + " -- layerplan predict ...`");
  keep_freed_memory_in_process();
  const auto kernels = make_kernels(kernel_kind);
  StandInTransport transport(world.rank);
  ExecutorOptions options;
  options.time_compute = true;
  Executor executor(graph, plan, *kernels, transport, options);
  const auto positions = positions_by_device(graph, plan[0], devices);
  const auto comm = connect_gloo(world);
  comm->barrier();  // every rank computes at the same time
  const StepTimings t = time_steps(graph, executor, positions[static_cast<size_t>(world.rank)], {world.rank}, devices, steps);
  // Gather: rank r's figures in slot r of each row, summed over the ranks. Rows: per layer
  // and step its compute and its forward part, then the time outside the kernels and making
  // the batch.
  const auto n = static_cast<size_t>(graph.size());
  const auto p = static_cast<size_t>(devices), r = static_cast<size_t>(world.rank);
  const size_t timed = t.compute.empty() ? 0 : t.compute[0][r].size();
  std::vector<float> rows((2 * n * timed + 2) * p, 0.0f);
  for (size_t id = 0; id < n; ++id) {
    for (size_t s = 0; s < timed; ++s) {
      rows[(id * timed + s) * p + r] = static_cast<float>(t.compute[id][r][s]);
      rows[((n + id) * timed + s) * p + r] = static_cast<float>(t.forward[id][r][s]);
    }
  }
  rows[2 * n * timed * p + r] = static_cast<float>(t.outside_kernels);
  rows[(2 * n * timed + 1) * p + r] = static_cast<float>(t.data);
  comm->all_reduce_sum(rows.data(), rows.size());
  StepSeconds compute(n, std::vector<std::vector<double>>(p)), forward = compute;
  for (size_t id = 0; id < n; ++id) {
    for (size_t d = 0; d < p; ++d) {
      for (size_t s = 0; s < timed; ++s) {
        compute[id][d].push_back(rows[(id * timed + s) * p + d]);
        forward[id][d].push_back(rows[((n + id) * timed + s) * p + d]);
      }
    }
  }
  std::vector<int> every(p);
  for (size_t d = 0; d < p; ++d) every[d] = static_cast<int>(d);
  MeasuredSteps m = with_slowest_devices(compute, forward, every);
  const auto row = [&](size_t i) { return std::vector<double>(rows.begin() + static_cast<std::ptrdiff_t>(i * p),
                                                              rows.begin() + static_cast<std::ptrdiff_t>((i + 1) * p)); };
  const std::vector<double> outside = row(2 * n * timed), making = row(2 * n * timed + 1);
  m.overhead_s = *std::max_element(outside.begin(), outside.end());
  m.data_s = *std::max_element(making.begin(), making.end());
  m.prints = world.rank == 0;
  return m;
}

}  // namespace layerplan
