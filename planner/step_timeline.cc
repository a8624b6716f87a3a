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

// When work of `work_s` seconds at full pace, begun at `start`, ends while the all-reduces
// of `spans` (those of `jobs` issued so far) run beside it: while any runs, it goes at
// (1 - the largest share among those running). A device computing a layer may not be one
// that reduces; taking every running all-reduce is the conservative side.
double slowed_end(double start, double work_s, const std::vector<SyncJob>& jobs, const std::vector<size_t>& issued,
                  const std::vector<SyncSpan>& spans) {
  std::vector<std::pair<double, double>> busy;  // [begin, end) of the running ones, with a share
  std::vector<double> shares;
  for (const size_t j : issued) {
    if (jobs[j].compute_share <= 0 || spans[j].end_s <= start) continue;
    busy.emplace_back(std::max(start, spans[j].start_s), spans[j].end_s);
    shares.push_back(jobs[j].compute_share);
  }
  if (busy.empty()) return start + work_s;
  std::vector<double> edges = {start};
  for (const auto& [b, e] : busy) edges.insert(edges.end(), {b, e});
  std::sort(edges.begin(), edges.end());
  double t = start, left = work_s;
  for (size_t i = 1; i < edges.size() && left > 0; ++i) {
    const double segment = edges[i] - t;
    if (segment <= 0) continue;
    double share = 0;
    for (size_t k = 0; k < busy.size(); ++k) {
      if (busy[k].first <= t && t < busy[k].second) share = std::max(share, shares[k]);
    }
    const double rate = 1.0 - share;
    if (segment * rate >= left) return t + left / rate;
    left -= segment * rate;
    t = edges[i];
  }
  return t + left;
}

}  // namespace

StepTimeline lay_out_step(const std::vector<LayerSpan>& layers, const std::vector<SyncJob>& jobs, bool overlap,
                          int device_count) {
  StepTimeline out;
  out.overlap = overlap;
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
  std::vector<size_t> issued;  // the jobs laid out so far
  for (int id = static_cast<int>(layers.size()) - 1; id >= 0; --id) {
    out.backward_start_s[static_cast<size_t>(id)] = now;
    const double work = layers[static_cast<size_t>(id)].backward_s;
    std::erase_if(issued, [&](size_t j) { return out.spans[j].end_s <= now; });
    now = overlap && sync_end > now ? slowed_end(now, work, jobs, issued, out.spans) : now + work;
    const auto ready = ready_after.find(id);
    if (ready == ready_after.end()) continue;
    issued.insert(issued.end(), ready->second.begin(), ready->second.end());
    const double end = run_jobs(jobs, ready->second, now, device_free, out.spans);
    sync_end = std::max(sync_end, end);
    if (!overlap) now = end;
  }
  const auto at_end = ready_after.find(-1);
  if (at_end != ready_after.end()) {
    sync_end = std::max(sync_end, run_jobs(jobs, at_end->second, now, device_free, out.spans));
  }
  out.step_s = std::max(now, sync_end);
  // What sync adds: waiting for it, and the backward it slowed.
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
    jobs.push_back({b.devices, b.reduce_after_layer, bytes, how.time_s, how, false, model.collective_compute_share()});
  }
  return jobs;
}

}  // namespace layerplan
