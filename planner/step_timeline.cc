#include "planner/step_timeline.h"

#include <algorithm>
#include <map>
#include <set>

#include "model/gradient_buckets.h"

namespace layerplan {

namespace {

// Runs the jobs `which`, all ready at `ready`, each on its devices once they are free;
// returns when the last of them ends.
double run_jobs(const std::vector<SyncJob>& jobs, const std::vector<size_t>& which, double ready,
                std::vector<double>& device_free, std::vector<SyncSpan>& spans) {
  double end = ready;
  for (const size_t j : which) {
    double start = ready;
    for (const int d : jobs[j].devices) start = std::max(start, device_free[static_cast<size_t>(d)]);
    const double done = start + jobs[j].time_s;
    for (const int d : jobs[j].devices) device_free[static_cast<size_t>(d)] = done;
    end = std::max(end, done);
    SyncSpan& span = spans[j];
    span = {jobs[j].after_layer,
            jobs[j].bytes,
            static_cast<int>(jobs[j].devices.size()),
            jobs[j].how.algorithm,
            jobs[j].how.protocol,
            start,
            done,
            jobs[j].parameter_server,
            jobs[j].devices};
  }
  return end;
}

}  // namespace

StepTimeline lay_out_step(const std::vector<LayerSpan>& layers, const std::vector<SyncJob>& jobs, bool overlap,
                          int device_count) {
  StepTimeline out;
  for (const LayerSpan& l : layers) {
    out.forward_s += l.forward_s;
    out.backward_s += l.backward_s;
  }
  for (const SyncJob& j : jobs) out.sync_s += j.time_s;
  out.sync_jobs = static_cast<int>(jobs.size());
  out.spans.resize(jobs.size());
  std::map<int, std::vector<size_t>> ready_after;  // the jobs ready after each layer, in order
  for (size_t j = 0; j < jobs.size(); ++j) ready_after[jobs[j].after_layer].push_back(j);
  std::vector<double> device_free(static_cast<size_t>(device_count), 0.0);
  double now = out.forward_s, sync_end = 0.0;
  out.backward_start_s.resize(layers.size());
  for (int id = static_cast<int>(layers.size()) - 1; id >= 0; --id) {
    out.backward_start_s[static_cast<size_t>(id)] = now;
    now += layers[static_cast<size_t>(id)].backward_s;
    const auto ready = ready_after.find(id);
    if (ready == ready_after.end()) continue;
    const double end = run_jobs(jobs, ready->second, now, device_free, out.spans);
    sync_end = std::max(sync_end, end);
    if (!overlap) now = end;
  }
  const auto at_end = ready_after.find(-1);
  if (at_end != ready_after.end()) {
    sync_end = std::max(sync_end, run_jobs(jobs, at_end->second, now, device_free, out.spans));
  }
  out.step_s = std::max(now, sync_end);
  out.exposed_sync_s = std::max(0.0, out.step_s - out.forward_s - out.backward_s);  // no rounding below 0
  return out;
}

namespace {

std::vector<SyncJob> parameter_server_jobs(const CostModel& model, const std::vector<Configuration>& configs) {
  std::vector<SyncJob> jobs;
  for (int id = model.graph().size() - 1; id >= 0; --id) {
    const Configuration& config = configs[static_cast<size_t>(id)];
    const double time = model.parameter_server_sync_time(model.graph().layer(id), config);
    if (time <= 0) continue;
    const std::set<int> devices(config.devices.begin(), config.devices.end());
    jobs.push_back({{devices.begin(), devices.end()}, id, 0.0, time, {}, true});
  }
  return jobs;
}

}  // namespace

std::vector<SyncJob> sync_jobs(const CostModel& model, const std::vector<Configuration>& configs) {
  if (model.sync_options().scheme == SyncScheme::kParameterServer) return parameter_server_jobs(model, configs);
  const auto element_bytes = static_cast<double>(model.devices().device().bytes_per_element);
  const std::vector<GradientBucket> buckets = gradient_buckets(
      model.graph(), configs,
      bucket_cap_elements(model.sync_options().bucket_bytes, model.devices().device().bytes_per_element));
  // Buckets that reduce at the same time share the NICs: those filled at the same layer on
  // disjoint devices. A device runs its buckets one after another (lay_out_step), so the k-th
  // bucket a device takes at a layer runs beside the k-th of the other devices, never beside
  // its own first k-1: each bucket's wave is one past the latest wave of its devices there.
  std::map<std::pair<int, int>, std::vector<std::vector<int>>> concurrent;  // (layer, wave) -> groups
  std::vector<int> waves(buckets.size(), 0);
  std::map<int, std::vector<int>> next_wave;  // per layer: each device's next free wave
  for (size_t i = 0; i < buckets.size(); ++i) {
    const GradientBucket& b = buckets[i];
    std::vector<int>& next = next_wave[b.reduce_after_layer];
    if (next.empty()) next.assign(static_cast<size_t>(model.devices().device_count()), 0);
    int wave = 0;
    for (const int d : b.devices) wave = std::max(wave, next[static_cast<size_t>(d)]);
    for (const int d : b.devices) next[static_cast<size_t>(d)] = wave + 1;
    waves[i] = wave;
    concurrent[{b.reduce_after_layer, wave}].push_back(b.devices);
  }
  std::map<std::pair<int, int>, std::vector<int>> users;
  for (const auto& [at, groups] : concurrent) users[at] = model.network_users(groups);
  std::vector<SyncJob> jobs;
  jobs.reserve(buckets.size());
  for (size_t i = 0; i < buckets.size(); ++i) {
    const GradientBucket& b = buckets[i];
    const double bytes = static_cast<double>(b.elements()) * element_bytes;
    const CollectiveEstimate how = model.all_reduce(b.devices, bytes, users[{b.reduce_after_layer, waves[i]}]);
    jobs.push_back({b.devices, b.reduce_after_layer, bytes, how.time_s, how});
  }
  return jobs;
}

}  // namespace layerplan
