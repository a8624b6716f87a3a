#include "predict/measurement.h"

#include <algorithm>
#include <chrono>
#include <string>

#include "common/error.h"
#include "predict/slowest_device.h"
#include "runtime/executor/executor.h"
#include "runtime/executor/in_process_transport.h"
#include "runtime/executor/stand_in_transport.h"
#include "runtime/gloo_communicator.h"
#include "runtime/heap_tuning.h"
#include "runtime/training/train_data.h"

namespace layerplan {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

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

// Devices 0 to `devices` - 1.
std::vector<int> every_device(int devices) {
  std::vector<int> every(static_cast<size_t>(devices));
  for (int d = 0; d < devices; ++d) every[static_cast<size_t>(d)] = d;
  return every;
}

// Timings of the steps of an executor (its compute timer on), the first not counted: per
// layer, device and step the compute and forward seconds, and (medians over the steps) the
// wall time outside the timed devices' kernels and the time making the batch.
struct StepTimings {
  StepSeconds compute, forward;  // [layer][device][step]
  double outside_kernels = 0, data = 0;
};

// Collects one step's figures into StepTimings.
class StepRecorder {
 public:
  StepRecorder(const Executor& executor, size_t layers, int device_count, const std::vector<int>& devices)
      : executor_(executor),
        devices_(devices),
        // The executor times the devices up to the highest one the plan uses; a device the
        // plan leaves idle computes nothing.
        timed_devices_(executor.compute_seconds().empty() ? 0 : executor.compute_seconds()[0].size()),
        width_(static_cast<size_t>(device_count)) {
    timings_.compute.assign(layers, std::vector<std::vector<double>>(width_));
    timings_.forward = timings_.compute;
  }

  // A step whose batch took `making_s` and whose executor step took `step_s` (wall time).
  void record(double making_s, double step_s) {
    double kernels = 0;
    for (size_t id = 0; id < timings_.compute.size(); ++id) {
      for (size_t d = 0; d < width_; ++d) {
        timings_.compute[id][d].push_back(seconds(executor_.compute_seconds(), id, d));
        timings_.forward[id][d].push_back(seconds(executor_.forward_seconds(), id, d));
      }
      for (int d : devices_) kernels += seconds(executor_.compute_seconds(), id, static_cast<size_t>(d));
    }
    outside_.push_back(std::max(0.0, step_s - kernels));
    making_.push_back(making_s);
  }

  StepTimings finish() {
    timings_.outside_kernels = median(outside_);
    timings_.data = median(making_);
    return std::move(timings_);
  }

 private:
  double seconds(const std::vector<std::vector<double>>& by_layer, size_t id, size_t d) const {
    return d < timed_devices_ ? by_layer[id][d] : 0.0;
  }

  const Executor& executor_;
  const std::vector<int>& devices_;
  size_t timed_devices_;
  size_t width_;
  StepTimings timings_;
  std::vector<double> outside_, making_;
};

// `steps` steps of `executor` on the batch's `positions`, timing `devices`' kernels.
StepTimings time_steps(const ModelGraph& graph, Executor& executor, const std::vector<Interval>& positions,
                       const std::vector<int>& devices, int device_count, int steps) {
  const Shape& input = graph.layer(0).output;
  DataOptions data_options;
  data_options.positions = positions;
  const TrainingData data =
      load_training_data("synthetic", input, graph.layer(graph.size() - 1).output.c(), data_options);
  // Batches made as `layerplan train` makes them by default (shuffled, seed 1).
  const EpochOrder order(data.train->samples(), input.n(), true, 1, 0);
  StepRecorder recorder(executor, static_cast<size_t>(graph.size()), device_count, devices);
  for (int s = 0; s < steps; ++s) {
    const auto t0 = Clock::now();
    const GlobalBatch gb = assemble_batch(*data.train, order, 0, s % order.batches(), input, positions);
    const auto t1 = Clock::now();
    executor.reset_compute_seconds();
    executor.step(gb.images, gb.labels);
    const auto t2 = Clock::now();
    if (s > 0) recorder.record(seconds_between(t0, t1), seconds_between(t1, t2));
  }
  return recorder.finish();
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

// The samples of the batch the busiest device makes.
int64_t busiest_samples(const std::vector<std::vector<Interval>>& positions) {
  int64_t busiest = 0;
  for (const auto& p : positions) {
    int64_t samples = 0;
    for (const Interval& i : p) samples += i.size();
    busiest = std::max(busiest, samples);
  }
  return busiest;
}

ExecutorOptions timing_executor_options() {
  ExecutorOptions options;
  options.time_compute = true;
  return options;
}

MeasuredSteps measure_in_one_process(const ModelGraph& graph, const std::vector<Configuration>& plan, int devices,
                                     const MeasureOptions& options) {
  keep_freed_memory_in_process();
  const auto kernels = make_kernels(options.kernels);
  InProcessTransport transport;
  Executor executor(graph, plan, *kernels, transport, timing_executor_options());
  const auto positions = positions_by_device(graph, plan[0], devices);
  const std::vector<Interval> all = {{0, graph.layer(0).output.n()}};
  const std::vector<int> every = every_device(devices);
  const StepTimings t = time_steps(graph, executor, all, every, devices, options.steps);
  const double core_share = options.core_share;
  MeasuredSteps m = with_slowest_devices(t.compute, t.forward, every);
  for (size_t id = 0; id < m.compute_s.size(); ++id) {
    m.compute_s[id] /= core_share;
    m.forward_s[id] /= core_share;
  }
  // The work outside the kernels is shared evenly by the devices; the busiest device makes
  // the largest part of the batch.
  const int64_t busiest = busiest_samples(positions);
  m.overhead_s = t.outside_kernels / devices / core_share;
  m.data_s = t.data * static_cast<double>(busiest) / static_cast<double>(graph.layer(0).output.n()) / core_share;
  return m;
}

// Every rank's timings in one buffer that an all-reduce (sum) gathers: rank r's figures in
// slot r of each row. Rows: per layer and step its compute and its forward part, then the
// time outside the kernels and making the batch.
class GatheredTimings {
 public:
  GatheredTimings(size_t layers, size_t steps, size_t ranks)
      : layers_(layers), steps_(steps), ranks_(ranks), rows_((2 * layers * steps + 2) * ranks, 0.0f) {}

  void put(const StepTimings& t, size_t rank) {
    for (size_t id = 0; id < layers_; ++id) {
      for (size_t s = 0; s < steps_; ++s) {
        at(compute_row(id, s), rank) = static_cast<float>(t.compute[id][rank][s]);
        at(forward_row(id, s), rank) = static_cast<float>(t.forward[id][rank][s]);
      }
    }
    at(outside_row(), rank) = static_cast<float>(t.outside_kernels);
    at(outside_row() + 1, rank) = static_cast<float>(t.data);
  }

  void all_reduce(Communicator& comm) { comm.all_reduce_sum(rows_.data(), rows_.size()); }

  // Every rank's per-layer figures, [layer][rank][step].
  StepSeconds compute() const { return by_layer(&GatheredTimings::compute_row); }
  StepSeconds forward() const { return by_layer(&GatheredTimings::forward_row); }
  // The largest over the ranks of the time outside the kernels, and of making the batch.
  double outside_kernels() const { return row_max(outside_row()); }
  double data() const { return row_max(outside_row() + 1); }

 private:
  size_t compute_row(size_t id, size_t s) const { return id * steps_ + s; }
  size_t forward_row(size_t id, size_t s) const { return (layers_ + id) * steps_ + s; }
  size_t outside_row() const { return 2 * layers_ * steps_; }
  float& at(size_t row, size_t rank) { return rows_[row * ranks_ + rank]; }

  StepSeconds by_layer(size_t (GatheredTimings::*row)(size_t, size_t) const) const {
    StepSeconds out(layers_, std::vector<std::vector<double>>(ranks_));
    for (size_t id = 0; id < layers_; ++id) {
      for (size_t d = 0; d < ranks_; ++d) {
        for (size_t s = 0; s < steps_; ++s) out[id][d].push_back(rows_[(this->*row)(id, s) * ranks_ + d]);
      }
    }
    return out;
  }

  double row_max(size_t row) const {
    const auto first = rows_.begin() + static_cast<std::ptrdiff_t>(row * ranks_);
    const std::vector<double> values(first, first + static_cast<std::ptrdiff_t>(ranks_));
    return *std::max_element(values.begin(), values.end());
  }

  size_t layers_, steps_, ranks_;
  std::vector<float> rows_;
};

MeasuredSteps measure_as_ranks(const ModelGraph& graph, const std::vector<Configuration>& plan, int devices,
                               const MeasureOptions& options) {
  const GlooOptions world = gloo_options_from_env();
  require(world.world_size == devices, "the plan is for " + std::to_string(devices) + " devices, this run has " +
                                           std::to_string(world.world_size) +
                                           " ranks: start it with `layerplan launch --nproc " +
                                           std::to_string(devices) + " -- layerplan predict ...`");
  keep_freed_memory_in_process();
  const auto kernels = make_kernels(options.kernels);
  StandInTransport transport(world.rank);
  Executor executor(graph, plan, *kernels, transport, timing_executor_options());
  const auto positions = positions_by_device(graph, plan[0], devices);
  const auto comm = connect_gloo(world);
  comm->barrier();  // every rank computes at the same time
  const StepTimings t =
      time_steps(graph, executor, positions[static_cast<size_t>(world.rank)], {world.rank}, devices, options.steps);
  const auto rank = static_cast<size_t>(world.rank);
  const size_t timed = t.compute.empty() ? 0 : t.compute[0][rank].size();
  GatheredTimings gathered(static_cast<size_t>(graph.size()), timed, static_cast<size_t>(devices));
  gathered.put(t, rank);
  gathered.all_reduce(*comm);
  MeasuredSteps m = with_slowest_devices(gathered.compute(), gathered.forward(), every_device(devices));
  m.overhead_s = gathered.outside_kernels();
  m.data_s = gathered.data();
  m.reports = world.rank == 0;
  return m;
}

}  // namespace

void validate(const MeasureOptions& options) {
  require(options.steps >= 2, "--steps " + std::to_string(options.steps) + ": expected 2 or more (the first warms up)");
  require(options.core_share > 0 && options.core_share <= 1,
          "--core-share " + std::to_string(options.core_share) + ": expected a fraction in (0, 1]");
  require(options.mode == MeasureMode::kOneProcess || options.core_share == 1.0,
          "--core-share " + std::to_string(options.core_share) +
              ": under layerplan launch the ranks share the cores themselves; leave it at 1");
}

MeasuredSteps measure_compute(const ModelGraph& graph, const std::vector<Configuration>& plan, int devices,
                              const MeasureOptions& options) {
  validate(options);
  return options.mode == MeasureMode::kAsRanks ? measure_as_ranks(graph, plan, devices, options)
                                               : measure_in_one_process(graph, plan, devices, options);
}

}  // namespace layerplan
