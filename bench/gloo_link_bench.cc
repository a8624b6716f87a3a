// The link between ranks of `layerplan launch` on this machine, as the cost model
// describes a link: latency and bandwidth, measured through the Gloo communicator that
// `layerplan train` uses. The ranks work in pairs (0 with 1, 2 with 3, ...), all pairs at
// once, so that with N ranks the figures are those of N ranks sharing this machine's cores
// and memory as N training ranks do: with more ranks than cores, a message waits for its
// receiver to be scheduled. Run it with the rank count of the training it prices.
//  - Each pair bounces messages of growing size; a one-way time is half the median
//    round trip. The bandwidth is that of a 16 MiB message sent both ways at once, as the
//    executor's box moves and rings send (its median time less the one-way time of a 4-byte
//    message); the one-way figure is printed and written too.
//  - The latency is what one message costs the way the executor sends them: both ranks post
//    a receive and then a send of 64 floats (a batch-norm statistics exchange or a small box
//    move), back to back and after computing for 0.1, 0.5, 2 and 10 ms. The JSON has each
//    (latency_by_gap) and their mean over the gaps after computing (latency_us), both the
//    mean over all ranks. On the 2-core virtual machine measured (docs/BENCHMARKS.md) a
//    message after computing costs 1 to 3 ms, against 0.2 to 0.3 ms back to back and 0.05
//    ms for the idle ping-pong's one way.
//  - The same for messages of 16 KiB, 256 KiB and 4 MiB, less their bytes at the bandwidth
//    (latency_by_size, by which `layerplan predict --link` prices box moves and statistics
//    exchanges when it is there; a ring's steps overlap and keep the 64-float figure). On
//    that VM a 256 KiB exchange back to back took 3 ms, ten times a 64-float one, far
//    beyond its bytes.
//  - The same for one-way messages of each size (one_way_by_size: the receiver's wait
//    from when both ranks were ready, beyond the bytes at the one-way bandwidth), by which
//    `layerplan predict --link` prices moves in which no rank both sends and receives (into
//    or out of a layer on fewer devices).
//  - With more than two ranks, the same for an exchange with every other rank at once
//    (all_peers_by_size, by the size of each message: a move between layers split
//    differently over all ranks) and for one rank receiving from every other at once
//    (fan_in_by_size, its wait from when all were ready: a gather into a layer on fewer
//    ranks); `layerplan predict --link` prices a move with several peers between the pair's
//    figure and these, by its busiest rank's peer count. On the VM with 4 ranks, an exchange
//    with all 3 peers cost about twice a pair's.
//  - The computing is a fixed amount of arithmetic per gap, the same on every rank (at the
//    ranks' mean pace), so that a rank slowed down finishes later, as with a kernel. It is
//    one thread's (`--compute one`, the figures in docs/BENCHMARKS.md) or
//    the rank's whole libgomp team's (`--compute team`, OMP_NUM_THREADS threads as
//    `layerplan launch` sets them), as oneDNN's kernels compute: then the team's workers
//    sleep on the rank's other cores while a message travels, as in training, and a
//    message's cost is its round (compute, then exchange) less the same compute back to
//    back: waking the workers for the compute after it is counted too. Not yet run on a
//    machine with more than one thread per rank.
// `layerplan predict --link-gbytes --link-latency-us` takes the two figures.
//
//   build/layerplan launch --nproc N -- build/bench/gloo_link_bench [--json FILE] [--compute one|team]
//   (N even)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <exception>
#include <fstream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "runtime/gloo_communicator.h"

namespace {

using Clock = std::chrono::steady_clock;

// The rank this one exchanges with: 0 with 1, 2 with 3, ...
int peer_of(const layerplan::Communicator& comm) { return comm.rank() ^ 1; }

// Half the median round trip of `floats` floats from the pair's even rank to its odd one and back.
double one_way_seconds(layerplan::Communicator& comm, size_t floats, int rounds) {
  std::vector<float> buffer(floats, 1.0f);
  std::vector<double> trips;
  const int peer = peer_of(comm);
  for (int r = 0; r < rounds + 1; ++r) {  // the first round connects and warms up
    comm.barrier();
    const auto t0 = Clock::now();
    if (comm.rank() % 2 == 0) {
      comm.isend(buffer.data(), floats, peer, 1)->wait();
      comm.irecv(buffer.data(), floats, peer, 2)->wait();
    } else {
      comm.irecv(buffer.data(), floats, peer, 1)->wait();
      comm.isend(buffer.data(), floats, peer, 2)->wait();
    }
    if (r > 0) trips.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  std::sort(trips.begin(), trips.end());
  return trips[trips.size() / 2] / 2;
}

// A fixed amount of arithmetic, as a kernel does: `rounds` rounds of 64 dependent
// multiply-adds; returns the result so that the work is not optimised away.
double arithmetic(int64_t rounds) {
  double x = 1;
  for (int64_t r = 0; r < rounds; ++r) {
    for (int i = 0; i < 64; ++i) x = x * 1.0000001 + 1e-9;
  }
  return x;
}

// Rounds of arithmetic() a second, the mean over the ranks (set_pace), so that every rank
// does the same work for a gap and a slower one finishes later, as with a kernel. Computing
// until a deadline instead made the ranks finish together and priced a message after 2 ms
// of it at twice what training paid on the 2-core VM (docs/BENCHMARKS.md).
double rounds_per_s = 0;

void set_pace(layerplan::Communicator& comm) {
  int64_t rounds = 1000;
  double seconds = 0;
  for (; seconds < 0.05; rounds *= 2) {
    const auto t0 = Clock::now();
    if (arithmetic(rounds) < 0) std::printf(" ");  // never: x stays positive
    seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  }
  float pace = static_cast<float>(static_cast<double>(rounds / 2) / seconds);
  comm.all_reduce_sum(&pace, 1);
  rounds_per_s = pace / static_cast<float>(comm.size());
}

// About `seconds` of arithmetic on this thread at the ranks' mean pace.
double busy_for(double seconds) { return arithmetic(static_cast<int64_t>(seconds * rounds_per_s)); }

// `seconds` of computing on this thread or, with `team`, on every thread of a libgomp
// parallel region, as a oneDNN kernel runs.
double compute_for(double seconds, bool team) {
  if (!team) return busy_for(seconds);
  double total = 0;
#pragma omp parallel reduction(+ : total)
  total += busy_for(seconds);
  return total;
}

// Seconds of one exchange with the pair's other rank: `out` sent while `in` is received, the
// receive posted first, as the executor's moves and reductions go.
double exchange_seconds(layerplan::Communicator& comm, const std::vector<float>& out, std::vector<float>& in,
                        uint32_t tag) {
  const auto t0 = Clock::now();
  auto received = comm.irecv(in.data(), in.size(), peer_of(comm), tag);
  auto sent = comm.isend(out.data(), out.size(), peer_of(comm), tag);
  received->wait();
  sent->wait();
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// The compute gaps measured, with their rounds for 64-float messages (fewer for larger ones).
const std::vector<std::pair<double, int>> kGaps = {{1e-4, 200}, {5e-4, 200}, {2e-3, 100}, {1e-2, 60}};

// How the ranks send one message of a measurement: in pairs (0 with 1, 2 with 3, ...) both
// ways or one way, or with every other rank at once both ways (a move between layers split
// differently over all ranks) or into one rank from all the others (a gather into a layer
// on fewer devices).
enum class Pattern { kPairExchange, kPairOneWay, kAllExchange, kFanIn };

// Seconds since the shared monotonic clock's epoch (the ranks run on one machine).
double now_s() { return std::chrono::duration<double>(Clock::now().time_since_epoch()).count(); }

// Seconds of one exchange with every other rank: a receive from each posted, then a send to
// each, all waited for.
double all_exchange_seconds(layerplan::Communicator& comm, const std::vector<float>& out,
                            std::vector<std::vector<float>>& in) {
  const auto t0 = Clock::now();
  std::vector<std::unique_ptr<layerplan::Request>> requests;
  for (int p = 0; p < comm.size(); ++p) {
    if (p != comm.rank()) requests.push_back(comm.irecv(in[static_cast<size_t>(p)].data(), out.size(), p, 7));
  }
  for (int p = 0; p < comm.size(); ++p) {
    if (p != comm.rank()) requests.push_back(comm.isend(out.data(), out.size(), p, 7));
  }
  for (auto& r : requests) r->wait();
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// One one-way message into `receiver` from `senders`: each sender stamps `out` with the time
// it sends and goes on; the receiver posts its receives and waits for all. Returns, for the
// receiver, the seconds from when all were ready (its receives posted and every message
// sent: the ranks share one monotonic clock) to the last arrival, so that a sender running
// late is not counted (in training that is compute imbalance, priced apart); 0 for a sender.
double one_way_seconds_of(layerplan::Communicator& comm, std::vector<float>& out, std::vector<std::vector<float>>& in,
                          int receiver, const std::vector<int>& senders) {
  if (comm.rank() != receiver) {
    const double sent = now_s();
    std::memcpy(out.data(), &sent, sizeof sent);
    comm.isend(out.data(), out.size(), receiver, 6)->wait();
    return 0;
  }
  const double posted = now_s();
  std::vector<std::unique_ptr<layerplan::Request>> requests;
  for (int p : senders) requests.push_back(comm.irecv(in[static_cast<size_t>(p)].data(), out.size(), p, 6));
  for (auto& r : requests) r->wait();
  const double arrived = now_s();
  double ready = posted;
  for (int p : senders) {
    double sent = 0;
    std::memcpy(&sent, in[static_cast<size_t>(p)].data(), sizeof sent);
    ready = std::max(ready, sent);
  }
  return std::max(0.0, arrived - ready);
}

// Round `i` of a pattern: the message's seconds, and whether this rank timed it (one way:
// received it). One way, the receiver alternates within the pair or, into one rank, goes
// round the ranks.
std::pair<double, bool> message_round(layerplan::Communicator& comm, Pattern pattern, int i, std::vector<float>& out,
                                      std::vector<std::vector<float>>& in) {
  const int rank = comm.rank();
  switch (pattern) {
    case Pattern::kPairExchange:
      return {exchange_seconds(comm, out, in[0], 4), true};
    case Pattern::kAllExchange:
      return {all_exchange_seconds(comm, out, in), true};
    case Pattern::kPairOneWay: {
      const int receiver = i % 2 == rank % 2 ? peer_of(comm) : rank;
      return {one_way_seconds_of(comm, out, in, receiver, {receiver ^ 1}), rank == receiver};
    }
    case Pattern::kFanIn: {
      const int receiver = i % comm.size();
      std::vector<int> senders;
      for (int p = 0; p < comm.size(); ++p) {
        if (p != receiver) senders.push_back(p);
      }
      return {one_way_seconds_of(comm, out, in, receiver, senders), rank == receiver};
    }
  }
  return {0, false};
}

// Mean seconds of a message of `floats` floats in `pattern` back to back, then after each
// rank has computed for each of kGaps, as the executor's messages follow its kernels. With
// the team, a message also costs waking the team's sleeping workers for the compute after
// it: a round (compute, then message) is timed whole, less what the same compute takes
// back to back, the workers still warm.
std::vector<double> message_by_gap(layerplan::Communicator& comm, size_t floats, bool team, Pattern pattern) {
  const bool one_way = pattern == Pattern::kPairOneWay || pattern == Pattern::kFanIn;
  std::vector<float> out(floats, 1.0f);
  std::vector<std::vector<float>> in(static_cast<size_t>(comm.size()), std::vector<float>(floats));
  const int divide = floats <= 4096 ? 1 : floats <= 65536 ? 2 : 4;  // large messages take longer
  std::vector<double> seconds;
  comm.barrier();
  const int back_to_back = 500 / divide;
  double total = 0, timed = 0;
  for (int i = 0; i < back_to_back; ++i) {
    const auto [t, counted] = message_round(comm, pattern, i, out, in);
    total += counted ? t : 0;
    timed += counted ? 1 : 0;
  }
  seconds.push_back(total / std::max(timed, 1.0));
  for (const auto& [gap, all_rounds] : kGaps) {
    // Into one rank, a whole number of turns round the ranks, each rank receiving.
    const int rounds = (all_rounds / divide + comm.size() - 1) / comm.size() * comm.size();
    double warm = 0;
    if (team) {
      const auto w0 = Clock::now();
      for (int i = 0; i < rounds; ++i) {
        if (compute_for(gap, team) < 0) std::printf(" ");  // never: x stays positive
      }
      warm = std::chrono::duration<double>(Clock::now() - w0).count() / rounds;
    }
    comm.barrier();
    total = 0;
    timed = 0;
    for (int i = 0; i < rounds; ++i) {
      const auto r0 = Clock::now();
      if (compute_for(gap, team) < 0) std::printf(" ");  // never: x stays positive
      const auto computed = Clock::now();
      const auto [t, counted] = message_round(comm, pattern, i, out, in);
      if (!counted) continue;
      // With the team: an exchange's whole round less the warm compute; a one-way message's
      // wait plus its compute's time over the warm compute.
      const double over_warm = std::chrono::duration<double>(computed - r0).count() - warm;
      total += !team ? t : one_way ? t + over_warm : std::chrono::duration<double>(Clock::now() - r0).count() - warm;
      timed += 1;
    }
    seconds.push_back(std::max(0.0, total / std::max(timed, 1.0)));
  }
  return seconds;
}

}  // namespace

int main(int argc, char** argv) {
  std::string json;
  bool team = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--json") == 0 && i + 1 < argc) {
      json = argv[++i];
    } else if (std::strcmp(argv[i], "--compute") == 0 && i + 1 < argc) {
      const std::string mode = argv[++i];
      if (mode != "one" && mode != "team") {
        std::fprintf(stderr, "gloo_link_bench: --compute '%s': expected one or team\n", mode.c_str());
        return 2;
      }
      team = mode == "team";
    } else {
      std::fprintf(stderr,
                   "gloo_link_bench: unknown argument '%s' (expected --json FILE or --compute one|team)\n",
                   argv[i]);
      return 2;
    }
  }
  try {
    const layerplan::GlooOptions options = layerplan::gloo_options_from_env();
    if (options.world_size < 2 || options.world_size % 2 != 0) {
      std::fprintf(stderr,
                   "gloo_link_bench: run it on an even number of ranks (layerplan launch --nproc 2, 4, ...), not %d\n",
                   options.world_size);
      return 2;
    }
    const auto comm = layerplan::connect_gloo(options);
    set_pace(*comm);
    double idle_latency = one_way_seconds(*comm, 1, 200);
    if (comm->rank() == 0) std::printf("%12s %14s %12s\n", "bytes", "one-way us", "GB/s");
    double one_way_bandwidth = 0, bandwidth = 0;
    for (const size_t floats : {size_t{1}, size_t{256}, size_t{4096}, size_t{65536}, size_t{1} << 20, size_t{4} << 20}) {
      const double t = one_way_seconds(*comm, floats, floats >= (size_t{1} << 20) ? 10 : 50);
      const double bytes = 4.0 * static_cast<double>(floats);
      if (comm->rank() == 0) std::printf("%12.0f %14.1f %12.3f\n", bytes, 1e6 * t, bytes / t / 1e9);
      if (floats == (size_t{4} << 20)) one_way_bandwidth = bytes / std::max(t - idle_latency, 1e-9) / 1e9;
    }
    // Both ways at once, as the executor moves boxes between ranks and runs its rings: each
    // rank sends 16 MiB while it receives 16 MiB. This is the bandwidth the cost model gets.
    {
      const size_t floats = size_t{4} << 20;
      std::vector<float> out(floats, 1.0f), in(floats);
      std::vector<double> times;
      for (int r = 0; r < 11; ++r) {
        comm->barrier();
        const double t = exchange_seconds(*comm, out, in, 5);
        if (r > 0) times.push_back(t);
      }
      std::sort(times.begin(), times.end());
      bandwidth = 4.0 * static_cast<double>(floats) / std::max(times[times.size() / 2] - idle_latency, 1e-9) / 1e9;
    }
    // Back-to-back small all-reduces, as the executor issues them layer after layer.
    std::vector<float> small(64, 1.0f);
    comm->barrier();
    const auto a0 = Clock::now();
    for (int i = 0; i < 500; ++i) comm->all_reduce_sum(small.data(), small.size());
    double all_reduce = std::chrono::duration<double>(Clock::now() - a0).count() / 500;
    // Exchanges by message size and compute gap: 64 floats are a batch-norm statistics
    // exchange or a small box move; the larger sizes, box moves and ring chunks. With
    // --compute team, the round less the warm compute (see message_by_gap).
    const std::vector<size_t> sizes = {64, 4096, 65536, size_t{1} << 20};
    // [pattern][size][gap: 0, then kGaps]. With two ranks, all the others are the pair's
    // other rank: those patterns are the pair's and are not measured again.
    const bool many = comm->size() > 2;
    const std::vector<Pattern> patterns =
        many ? std::vector<Pattern>{Pattern::kPairExchange, Pattern::kPairOneWay, Pattern::kAllExchange, Pattern::kFanIn}
             : std::vector<Pattern>{Pattern::kPairExchange, Pattern::kPairOneWay};
    std::vector<std::vector<std::vector<double>>> tables(patterns.size());
    for (size_t p = 0; p < patterns.size(); ++p) {
      for (const size_t floats : sizes) tables[p].push_back(message_by_gap(*comm, floats, team, patterns[p]));
    }
    // Every figure as the mean over the ranks: with more ranks than cores, the pairs fare
    // differently.
    std::vector<float> figures = {static_cast<float>(idle_latency), static_cast<float>(one_way_bandwidth),
                                  static_cast<float>(bandwidth), static_cast<float>(all_reduce)};
    for (const auto& table : tables) {
      for (const auto& row : table) figures.insert(figures.end(), row.begin(), row.end());
    }
    comm->all_reduce_sum(figures.data(), figures.size());
    for (float& f : figures) f /= static_cast<float>(comm->size());
    idle_latency = figures[0];
    one_way_bandwidth = figures[1];
    bandwidth = figures[2];
    all_reduce = figures[3];
    size_t next = 4;
    for (auto& table : tables) {
      for (auto& row : table) {
        for (double& t : row) t = figures[next++];
      }
    }
    const auto& by_size = tables[0];
    // 64 floats: (gap s, exchange s); the mean after computing is the one latency the cost
    // model's link gets.
    std::vector<std::pair<double, double>> by_gap;
    double latency = 0;
    for (size_t g = 0; g < kGaps.size() + 1; ++g) {
      by_gap.emplace_back(g == 0 ? 0.0 : kGaps[g - 1].first, by_size[0][g]);
      if (g > 0) latency += by_size[0][g] / static_cast<double>(kGaps.size());
    }
    const double exchange = by_gap[0].second;
    if (comm->rank() == 0) {
      std::printf("64 floats: ping-pong one-way %.1f us; back to back: all-reduce %.1f us, exchange %.1f us\n",
                  1e6 * idle_latency, 1e6 * all_reduce, 1e6 * exchange);
    }
    if (comm->rank() == 0) {
      std::printf("exchange of 64 floats after computing for");
      for (const auto& [gap, t] : by_gap) std::printf(" %g ms: %.1f us;", 1e3 * gap, 1e6 * t);
      const auto print_table = [&](const char* title, const std::vector<std::vector<double>>& table) {
        std::printf("\n%s (us) by message size after computing for\n%12s", title, "bytes");
        for (const auto& [gap, t] : by_gap) std::printf(" %8g ms", 1e3 * gap);
        for (size_t k = 0; k < sizes.size(); ++k) {
          std::printf("\n%12zu", 4 * sizes[k]);
          for (const double t : table[k]) std::printf(" %11.1f", 1e6 * t);
        }
      };
      print_table("exchange", by_size);
      print_table("one way, the receiver's wait", tables[1]);
      if (many) {
        print_table("exchange with every other rank at once", tables[2]);
        print_table("into one rank from every other, its wait", tables[3]);
      }
      std::printf("\nbandwidth: %.3f GB/s one way at a time, %.3f GB/s each way when both ranks send at once\n",
                  one_way_bandwidth, bandwidth);
      std::printf("link: latency %.1f us, bandwidth %.3f GB/s\n", 1e6 * latency, bandwidth);
      if (!json.empty()) {
        std::ofstream out(json);
        out << "{\"latency_us\": " << 1e6 * latency << ", \"bandwidth_gbytes\": " << bandwidth
            << ", \"one_way_bandwidth_gbytes\": " << one_way_bandwidth
            << ", \"ping_pong_latency_us\": " << 1e6 * idle_latency << ", \"latency_by_gap\": [";
        for (size_t i = 0; i < by_gap.size(); ++i) {
          out << (i ? ", " : "") << "{\"gap_ms\": " << 1e3 * by_gap[i].first << ", \"latency_us\": " << 1e6 * by_gap[i].second
              << "}";
        }
        // By size: what an exchange takes beyond its bytes at the bandwidth both ways, and
        // a one-way message beyond its bytes at the one-way bandwidth.
        // `peers`: the messages of that size a rank sends (or, into one rank, receives) at once.
        const auto sized = [&](const char* key, const std::vector<std::vector<double>>& table, double gbytes,
                               int peers) {
          out << "], \"" << key << "\": [";
          for (size_t k = 0; k < sizes.size(); ++k) {
            const double bytes = 4.0 * static_cast<double>(sizes[k]);
            out << (k ? ", " : "") << "{\"bytes\": " << 4 * sizes[k] << ", \"latency_by_gap\": [";
            for (size_t g = 0; g < by_gap.size(); ++g) {
              const double beyond = std::max(0.0, table[k][g] - peers * bytes / (1e9 * gbytes));
              out << (g ? ", " : "") << "{\"gap_ms\": " << 1e3 * by_gap[g].first << ", \"latency_us\": " << 1e6 * beyond
                  << "}";
            }
            out << "]}";
          }
        };
        sized("latency_by_size", by_size, bandwidth, 1);
        sized("one_way_by_size", tables[1], one_way_bandwidth, 1);
        if (many) {
          sized("all_peers_by_size", tables[2], bandwidth, comm->size() - 1);
          sized("fan_in_by_size", tables[3], one_way_bandwidth, comm->size() - 1);
          out << "], \"all_peers\": " << comm->size() - 1;
        } else {
          out << "]";
        }
        out << "}\n";
      }
    }
    comm->barrier();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gloo_link_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
