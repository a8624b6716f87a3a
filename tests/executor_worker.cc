// layerplan_executor_worker: a rank for executor_multiprocess_test. Every rank joins the
// Gloo world from `layerplan launch`'s environment, holds the tiles of device = its rank
// and trains a plan with the executor over a CommunicatorTransport; it also trains the
// same plan in one process (InProcessTransport) and checks, on every rank:
//   - the per-step losses are equal;
//   - the parameters, summed over ranks (each rank gives the shards it holds first), equal
//     the in-process parameters;
//   - the elements this rank sent, per edge, direction and peer, and per all-reduce, equal
//     the in-process counts whose source is this device;
//   - the communicator's byte counters equal 4 bytes per float and 8 per double sent;
//   - with `overlap`: the run reduces gradient buckets on a communication thread over a
//     second communicator (ExecutorOptions::overlap), and its losses and parameters equal,
//     bitwise, those of a run over the communicator without overlap.
// Usage: layerplan_executor_worker MODEL PLAN [STEPS [perturb | bucket-bytes=N | overlap
//        | clip | adamw]...]
//   MODEL lenet5 | residual;  PLAN dp | mp | owt | lw (layer-wise) | random:SEED
//   perturb: the multi-process run uses a 1 % larger learning rate (the checks must fail)
//   perturb-overlap: overlap, and only the overlapped run's learning rate is 1 % larger
//   bucket-bytes=N: both runs reduce weight gradients in buckets of N bytes
//   clip, adamw: every run clips gradients to a 2-norm of 0.05, or uses AdamW
// Prints "rank R ok: ..." and exits 0, or prints what differs and exits 1.
#include <cmath>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>

#include "model/zoo.h"
#include "runtime/executor/communicator_transport.h"
#include "runtime/gloo_communicator.h"
#include "tests/executor_test_util.h"

using namespace layerplan;
using namespace layerplan::testing;

namespace {

std::vector<Configuration> plan_named(const ModelGraph& graph, const std::string& name, int devices) {
  if (name == "dp") return data_parallel(graph, devices);
  if (name == "mp") return model_parallel(graph, devices);
  if (name == "owt") return one_weird_trick(graph, devices);
  if (name == "lw") return layer_wise_plan(graph, devices);
  if (name.rfind("random:", 0) == 0) {
    std::mt19937 rng(static_cast<uint32_t>(std::stoul(name.substr(7))));
    return random_plan(graph, devices, rng);
  }
  throw std::invalid_argument("unknown plan " + name);
}

TrafficCounts sent_by(const TrafficCounts& all, int device) {
  TrafficCounts mine;
  for (const auto& [key, v] : all.forward) {
    if (std::get<2>(key) == device) mine.forward[key] = v;
  }
  for (const auto& [key, v] : all.backward) {
    if (std::get<2>(key) == device) mine.backward[key] = v;
  }
  for (const auto& [key, v] : all.pairs) {
    if (key.first == device) mine.pairs[key] = v;
  }
  return mine;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: layerplan_executor_worker MODEL PLAN [STEPS]\n");
    return 2;
  }
  const std::string model = argv[1], plan_name = argv[2];
  const int steps = argc > 3 ? std::stoi(argv[3]) : 3;
  bool perturb = false, perturb_overlap = false, overlap = false, clip = false, adamw = false;
  int64_t bucket_bytes = ExecutorOptions{}.gradient_bucket_bytes;
  for (int i = 4; i < argc; ++i) {
    const std::string option = argv[i];
    if (option == "perturb") {
      perturb = true;
    } else if (option.rfind("bucket-bytes=", 0) == 0) {
      bucket_bytes = std::stoll(option.substr(13));
    } else if (option == "perturb-overlap") {
      perturb_overlap = overlap = true;
    } else if (option == "overlap") {
      overlap = true;
    } else if (option == "clip") {
      clip = true;
    } else if (option == "adamw") {
      adamw = true;
    } else {
      std::fprintf(stderr, "layerplan_executor_worker: unknown option '%s'\n", option.c_str());
      return 2;
    }
  }
  try {
    auto comm = connect_gloo(gloo_options_from_env());
    const int rank = comm->rank();
    const ModelGraph graph = model == "lenet5" ? lenet5(4) : residual_inception_net();
    const std::vector<Configuration> plan = plan_named(graph, plan_name, comm->size());
    ExecutorOptions options;
    options.sgd = test_sgd();
    options.gradient_bucket_bytes = bucket_bytes;
    if (clip) options.clip_grad_norm = 0.05;
    if (adamw) {
      options.optimizer = OptimizerKind::kAdamW;
      options.adamw.lr = 1e-3;
    }
    const TrainResult want = train_with(graph, plan, steps, options);

    const auto kernels = make_kernels("reference");
    if (perturb) options.sgd.lr *= 1.01;
    // The executor over the communicator (and, with overlap, a second one for the gradients);
    // the parameters summed over ranks.
    const auto run = [&](CommunicatorTransport& transport, bool overlapped) {
      ExecutorOptions o = options;
      o.overlap = overlapped;
      if (overlapped && perturb_overlap) o.sgd.lr *= 1.01;
      Executor executor(graph, plan, *kernels, transport, o);
      TrainResult r;
      for (const Batch& b : test_batches(graph, steps)) r.losses.push_back(executor.step(b.images, b.labels));
      for (const Layer& layer : graph.layers()) {
        LayerParams p = has_params(layer.kind) ? executor.gathered_params(layer.id) : LayerParams{};
        for (auto* v : {&p.weight, &p.bias, &p.running_mean, &p.running_var}) {
          if (!v->empty()) comm->all_reduce_sum(v->data(), v->size());
        }
        r.params.push_back(std::move(p));
      }
      return r;
    };
    std::unique_ptr<Communicator> gradients;
    TrainResult off;
    if (overlap) {
      CommunicatorTransport blocking(*comm);
      off = run(blocking, false);
      std::vector<int> every_rank(static_cast<size_t>(comm->size()));
      for (int r = 0; r < comm->size(); ++r) every_rank[static_cast<size_t>(r)] = r;
      gradients = comm->create_group(every_rank);
      comm->counters().reset();  // the checks below count the overlapped run's bytes
    }
    CommunicatorTransport transport(*comm, gradients.get());
    const TrainResult got = run(transport, overlap);

    std::string wrong;
    if (overlap) {
      bool same = got.losses == off.losses;
      for (size_t id = 0; id < got.params.size(); ++id) {
        const LayerParams &a = got.params[id], &b = off.params[id];
        same = same && a.weight == b.weight && a.bias == b.bias && a.running_mean == b.running_mean &&
               a.running_var == b.running_var;
      }
      if (!same) wrong += " overlap on and off differ;";
    }

    const double diff = max_difference(got, want);
    if (!(diff <= 1e-6)) wrong += " numbers differ by " + std::to_string(diff) + ";";
    const TrafficCounts& sent = transport.counts();
    const TrafficCounts expected = sent_by(want.traffic, rank);
    if (sent.forward != expected.forward) wrong += " forward moves differ;";
    if (sent.backward != expected.backward) wrong += " backward moves differ;";
    if (sent.pairs != expected.pairs) wrong += " per-peer elements differ;";
    int64_t floats = 0, doubles = 0;
    for (const auto& [k, v] : sent.forward) floats += v;
    for (const auto& [k, v] : sent.backward) floats += v;
    for (const auto& [k, v] : sent.weight_sync) floats += v;
    for (const auto& [k, v] : sent.statistics) doubles += v;
    for (const auto& [k, v] : sent.loss) doubles += v;
    // The parameter gathering above is the only other traffic: a world all-reduce per tensor.
    uint64_t gather_bytes = 0;
    for (const LayerParams& p : got.params) {
      for (const auto* v : {&p.weight, &p.bias, &p.running_mean, &p.running_var}) {
        if (!v->empty()) gather_bytes += ring_all_reduce_bytes_sent(v->size(), comm->size(), rank);
      }
    }
    const uint64_t p2p = comm->counters().total(TrafficKind::kPointToPoint);
    if (p2p != static_cast<uint64_t>(4 * floats + 8 * doubles)) {
      wrong += " communicator sent " + std::to_string(p2p) + " point-to-point bytes, transport counted " +
               std::to_string(4 * floats + 8 * doubles) + ";";
    }
    if (comm->counters().total(TrafficKind::kCollective) != gather_bytes) wrong += " collective bytes differ;";
    if (!wrong.empty()) {
      std::printf("rank %d WRONG %s %s:%s\n", rank, model.c_str(), plan_name.c_str(), wrong.c_str());
      return 1;
    }
    std::printf("rank %d ok: %s %s, %d steps, loss %.6f -> %.6f, sent %lld floats and %lld doubles\n", rank,
                model.c_str(), plan_name.c_str(), steps, got.losses.front(), got.losses.back(),
                static_cast<long long>(floats), static_cast<long long>(doubles));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "layerplan_executor_worker: %s\n", e.what());
    return 1;
  }
}
