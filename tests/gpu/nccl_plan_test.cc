// Which NCCL calls each rank issues (runtime/gpu/nccl_plan.h), checked on the executor's
// own transfers without a GPU: a transport that runs the in-process moves and, for every
// rank, plans that rank's NCCL calls. Every send must meet the receive of the same move in
// the same order on its peer, and the elements each rank plans to send, per peer and per
// edge, must equal what the transports count (the Gloo path counts the same), so "bytes
// moved = bytes predicted" holds on GPUs.
#include "runtime/gpu/nccl_plan.h"

#include <gtest/gtest.h>

#include <map>
#include <tuple>

#include "tests/executor_test_util.h"

namespace layerplan::testing {
namespace {

// Runs the moves in process, and records what the NCCL ranks 0..devices-1 would send.
class PlanningTransport : public InProcessTransport {
 public:
  explicit PlanningTransport(int devices) : devices_(devices) {}

  void exchange(const std::vector<BoxMove>& moves, const EdgeTag& tag) override {
    std::map<std::pair<int, int>, std::vector<PeerCall>> sent, received;
    std::vector<int> seen(moves.size(), 0);
    for (int rank = 0; rank < devices_; ++rank) {
      const RankMoves plan = plan_box_moves(moves, rank);
      for (const PeerCall& s : plan.sends) {
        sent[{rank, s.peer}].push_back(s);
        ++seen[static_cast<size_t>(s.move)];
        auto& per_edge = tag.direction == Direction::kForward ? planned.forward : planned.backward;
        per_edge[{tag.consumer, tag.slot, rank, s.peer}] += s.elements;
      }
      for (const PeerCall& r : plan.recvs) {
        received[{r.peer, rank}].push_back({r.move, rank, r.elements});
        ++seen[static_cast<size_t>(r.move)];
      }
      for (const int m : plan.local) seen[static_cast<size_t>(m)] += 2;
      for (const auto& [peer, elements] : plan.elements_sent()) planned.pairs[{rank, peer}] += elements;
    }
    // The k-th send from a to b is the k-th receive of b from a: the same move, the same size.
    EXPECT_EQ(sent, received) << "edge " << tag.consumer << ":" << tag.slot;
    for (size_t m = 0; m < moves.size(); ++m) EXPECT_EQ(seen[m], 2) << "move " << m << " sent and received once";
    InProcessTransport::exchange(moves, tag);
  }

  void all_reduce(const std::vector<int>& devices, const std::vector<std::vector<float>*>& buffers,
                  const std::vector<ReduceSegment>& segments) override {
    const auto n = static_cast<int64_t>(buffers.front()->size());
    for (int rank = 0; rank < devices_; ++rank) {
      for (const RingSend& s : ring_sends(n, devices, rank)) {
        planned.pairs[{rank, s.peer}] += s.hi - s.lo;
        planned_weights += s.hi - s.lo;
      }
    }
    InProcessTransport::all_reduce(devices, buffers, segments);
  }

  void all_reduce(const std::vector<int>& devices, const std::vector<std::vector<double>*>& buffers, ReduceKind kind,
                  int layer) override {
    const auto n = static_cast<int64_t>(buffers.front()->size());
    for (int rank = 0; rank < devices_; ++rank) {
      for (const int peer : exchange_peers(devices, rank)) {
        planned.pairs[{rank, peer}] += n;
        (kind == ReduceKind::kLoss ? planned.loss : planned.statistics)[layer] += n;
      }
    }
    InProcessTransport::all_reduce(devices, buffers, kind, layer);
  }

  TrafficCounts planned;
  int64_t planned_weights = 0;

 private:
  int devices_;
};

int64_t total(const std::map<int, int64_t>& per_layer) {
  int64_t sum = 0;
  for (const auto& [layer, elements] : per_layer) sum += elements;
  return sum;
}

TEST(NcclPlan, EveryRanksCallsMatchTheCountedBytesOfEveryPlan) {
  const ModelGraph graph = residual_inception_net();
  const auto kernels = make_kernels("reference");
  int64_t statistics = 0, weights = 0;  // that the plans exercise both reductions
  for (const int devices : {2, 4}) {
    for (const NamedPlan& plan : plans_to_test(graph, devices, 3, 7)) {
      SCOPED_TRACE(plan.name + " on " + std::to_string(devices));
      PlanningTransport transport(devices);
      ExecutorOptions options;
      options.sgd = test_sgd();
      Executor executor(graph, plan.configs, *kernels, transport, options);
      for (const Batch& b : test_batches(graph, 1)) executor.step(b.images, b.labels);
      const TrafficCounts& counted = transport.counts();
      EXPECT_EQ(transport.planned.forward, counted.forward);
      EXPECT_EQ(transport.planned.backward, counted.backward);
      EXPECT_EQ(transport.planned.pairs, counted.pairs);
      EXPECT_EQ(transport.planned_weights, total(counted.weight_sync));
      EXPECT_EQ(transport.planned.statistics, counted.statistics);
      EXPECT_EQ(transport.planned.loss, counted.loss);
      statistics += total(counted.statistics);
      weights += total(counted.weight_sync);
    }
  }
  EXPECT_GT(statistics, 0);
  EXPECT_GT(weights, 0);
}

TEST(NcclPlan, LocalMovesUseNoNcclAndEmptyRegionsAreSkipped) {
  const Box a = Box::whole(Shape{{2, 3, 4, 4}});
  Box empty = a;
  empty.dim[0].hi = 0;
  const std::vector<BoxMove> moves = {{nullptr, 1, nullptr, 1, a},
                                      {nullptr, 1, nullptr, 0, a},
                                      {nullptr, 0, nullptr, 1, empty},
                                      {nullptr, 0, nullptr, 1, a}};
  const RankMoves one = plan_box_moves(moves, 1);
  EXPECT_EQ(one.local, std::vector<int>{0});
  EXPECT_EQ(one.sends, (std::vector<PeerCall>{{1, 0, a.volume()}}));
  EXPECT_EQ(one.recvs, (std::vector<PeerCall>{{3, 0, a.volume()}}));
  EXPECT_EQ(one.elements_sent(), (std::map<int, int64_t>{{0, a.volume()}}));
  EXPECT_FALSE(plan_box_moves(moves, 2).uses_nccl());
  EXPECT_TRUE(plan_box_moves(moves, 0).uses_nccl());
}

TEST(NcclPlan, RingSendsCoverTheBufferLikeTheGlooRing) {
  // n = 10 over devices {5, 2, 7}: chunks of 4, 3, 3; every position sends 2(p-1) chunks to
  // the next in ascending order, and over the ring each chunk is sent 2(p-1) times in all.
  const std::vector<int> devices = {5, 2, 7};
  std::map<std::pair<int64_t, int64_t>, int> times;
  for (const int rank : devices) {
    const std::vector<RingSend> sends = ring_sends(10, devices, rank);
    EXPECT_EQ(sends.size(), 4u);
    for (const RingSend& s : sends) {
      EXPECT_EQ(s.peer, rank == 2 ? 5 : rank == 5 ? 7 : 2);
      ++times[{s.lo, s.hi}];
    }
  }
  EXPECT_EQ(times, (std::map<std::pair<int64_t, int64_t>, int>{{{0, 4}, 4}, {{4, 7}, 4}, {{7, 10}, 4}}));
  EXPECT_TRUE(ring_sends(10, devices, 3).empty());
  EXPECT_TRUE(ring_sends(10, {3}, 3).empty());
  EXPECT_EQ(exchange_peers({5, 2, 7}, 5), (std::vector<int>{2, 7}));
  EXPECT_TRUE(exchange_peers({5, 2, 7}, 1).empty());
}

}  // namespace
}  // namespace layerplan::testing
