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
//    mean over all ranks (what they came to: docs/BENCHMARKS.md).
//  - The same for messages of 16 KiB, 256 KiB and 4 MiB, less their bytes at the bandwidth
//    (latency_by_size, by which `layerplan predict --link` prices box moves and statistics
//    exchanges when it is there; a ring's steps overlap and keep the 64-float figure).
//  - The same for one-way messages of each size (one_way_by_size: the receiver's wait
//    from when both ranks were ready, beyond the bytes at the one-way bandwidth), by which
//    `layerplan predict --link` prices moves in which no rank both sends and receives (into
//    or out of a layer on fewer devices).
//  - With more than two ranks, the same for an exchange with every other rank at once
//    (all_peers_by_size, by the size of each message: a move between layers split
//    differently over all ranks) and for one rank receiving from every other at once
//    (fan_in_by_size, its wait from when all were ready: a gather into a layer on fewer
//    ranks); `layerplan predict --link` prices a move with several peers between the pair's
//    figure and these, by its busiest rank's peer count.
//  - The computing is a fixed amount of arithmetic per gap, the same on every rank (at the
//    ranks' mean pace), so that a rank slowed down finishes later, as with a kernel. It is
//    one thread's (`--compute one`, the figures in docs/BENCHMARKS.md) or
//    the rank's whole libgomp team's (`--compute team`, OMP_NUM_THREADS threads as
//    `layerplan launch` sets them), as oneDNN's kernels compute: then the team's workers
//    sleep on the rank's other cores while a message travels, as in training, and a
//    message's cost is its round (compute, then exchange) less the same compute back to
//    back: waking the workers for the compute after it is counted too.
// `layerplan predict --link-gbytes --link-latency-us` takes the two figures.
//
//   build/layerplan launch --nproc N -- build/bench/gloo_link_bench [--json FILE] [--compute one|team]
//   (N even)
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
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
// does the same work for a gap and a slower one finishes later, as with a kernel, rather than
// computing until a deadline (why: docs/BENCHMARKS.md).
double rounds_per_s = 0;

void set_pace(layerplan::Communicator& comm) {
  int64_t rounds = 1000;
  double seconds = 0;
  for (; seconds < 0.05; rounds *= 2) {
    const auto t0 = Clock::now();
    if (arithmetic(rounds) < 0) std::printf(" ");  // never: x stays positive
    seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  }
  const int64_t last_rounds = rounds / 2;  // the doubling above ran one step past them
  float pace = static_cast<float>(static_cast<double>(last_rounds) / seconds);
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
  std::vector<std::unique_ptr<layerplan::Request>> requests;
  requests.reserve(senders.size());
  const double posted = now_s();
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
// Where one measurement writes its messages: one buffer out, one in from each rank.
struct Buffers {
  std::vector<float> out;
  std::vector<std::vector<float>> in;
};

// Mean seconds of `rounds` messages in `pattern`, each after `gap` seconds of computing
// (none for a gap of 0), over the rounds this rank timed. `warm`: what the compute alone
// takes back to back, taken off with the team.
double mean_round_seconds(layerplan::Communicator& comm, Pattern pattern, Buffers& b, int rounds, double gap, bool team,
                          double warm) {
  const bool one_way = pattern == Pattern::kPairOneWay || pattern == Pattern::kFanIn;
  double total = 0, timed = 0;
  for (int i = 0; i < rounds; ++i) {
    const auto r0 = Clock::now();
    if (gap > 0 && compute_for(gap, team) < 0) std::printf(" ");  // never: x stays positive
    const auto computed = Clock::now();
    const auto [t, counted] = message_round(comm, pattern, i, b.out, b.in);
    if (!counted) continue;
    // With the team: an exchange's whole round less the warm compute; a one-way message's
    // wait plus its compute's time over the warm compute.
    const double over_warm = std::chrono::duration<double>(computed - r0).count() - warm;
    total += !team ? t : one_way ? t + over_warm : std::chrono::duration<double>(Clock::now() - r0).count() - warm;
    timed += 1;
  }
  return total / std::max(timed, 1.0);
}

// Seconds of `rounds` computes of `gap` back to back on the team, the workers kept warm.
double warm_compute_seconds(double gap, int rounds) {
  const auto w0 = Clock::now();
  for (int i = 0; i < rounds; ++i) {
    if (compute_for(gap, true) < 0) std::printf(" ");  // never: x stays positive
  }
  return std::chrono::duration<double>(Clock::now() - w0).count() / rounds;
}

// Mean seconds of a message of `floats` floats in `pattern` back to back, then after each
// rank has computed for each of kGaps, as the executor's messages follow its kernels. With
// the team, a message also costs waking the team's sleeping workers for the compute after
// it: a round (compute, then message) is timed whole, less what the same compute takes
// back to back, the workers still warm.
std::vector<double> message_by_gap(layerplan::Communicator& comm, size_t floats, bool team, Pattern pattern) {
  Buffers b{std::vector<float>(floats, 1.0f),
            std::vector<std::vector<float>>(static_cast<size_t>(comm.size()), std::vector<float>(floats))};
  const int divide = floats <= 4096 ? 1 : floats <= 65536 ? 2 : 4;  // large messages take longer
  comm.barrier();
  std::vector<double> seconds = {mean_round_seconds(comm, pattern, b, 500 / divide, 0, false, 0)};
  for (const auto& [gap, all_rounds] : kGaps) {
    // Into one rank, a whole number of turns round the ranks, each rank receiving.
    const int rounds = (all_rounds / divide + comm.size() - 1) / comm.size() * comm.size();
    const double warm = team ? warm_compute_seconds(gap, rounds) : 0;
    comm.barrier();
    seconds.push_back(std::max(0.0, mean_round_seconds(comm, pattern, b, rounds, gap, team, warm)));
  }
  return seconds;
}

// What the command line asks for.
struct BenchArgs {
  std::string json;   // --json FILE: where rank 0 writes the figures
  bool team = false;  // --compute team: compute on the libgomp team, not one thread
};

// Returns false (having said why) for an argument it does not know.
bool parse_args(int argc, char** argv, BenchArgs& args) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--json") == 0 && i + 1 < argc) {
      args.json = argv[++i];
    } else if (std::strcmp(argv[i], "--compute") == 0 && i + 1 < argc) {
      const std::string mode = argv[++i];
      if (mode != "one" && mode != "team") {
        std::fprintf(stderr, "gloo_link_bench: --compute '%s': expected one or team\n", mode.c_str());
        return false;
      }
      args.team = mode == "team";
    } else {
      std::fprintf(stderr, "gloo_link_bench: unknown argument '%s' (expected --json FILE or --compute one|team)\n",
                   argv[i]);
      return false;
    }
  }
  return true;
}

// Exchanges by message size and compute gap: 64 floats are a batch-norm statistics
// exchange or a small box move; the larger sizes, box moves and ring chunks.
const std::vector<size_t> kSizes = {64, 4096, 65536, size_t{1} << 20};
using Table = std::vector<std::vector<double>>;  // [size][gap: 0, then kGaps]

// Every figure, each the mean over the ranks: with more ranks than cores, the pairs fare differently.
struct Figures {
  double idle_latency = 0;       // one way of the 4-byte ping-pong
  double one_way_bandwidth = 0;  // GB/s of a 16 MiB message one way at a time
  double bandwidth = 0;          // GB/s each way of 16 MiB sent both ways at once
  double all_reduce = 0;         // seconds of a 64-float all-reduce back to back
  std::vector<Table> tables;     // [pattern]: pair exchange, pair one way, then (many ranks) all peers, fan-in
  bool many = false;             // more than two ranks: the all-peers and fan-in patterns were measured
};

// Ping-pong by size (printed by rank 0); returns the one-way bandwidth of 16 MiB in GB/s.
double ping_pong_bandwidth(layerplan::Communicator& comm, double idle_latency) {
  if (comm.rank() == 0) std::printf("%12s %14s %12s\n", "bytes", "one-way us", "GB/s");
  double one_way_bandwidth = 0;
  for (const size_t floats : {size_t{1}, size_t{256}, size_t{4096}, size_t{65536}, size_t{1} << 20, size_t{4} << 20}) {
    const double t = one_way_seconds(comm, floats, floats >= (size_t{1} << 20) ? 10 : 50);
    const double bytes = 4.0 * static_cast<double>(floats);
    if (comm.rank() == 0) std::printf("%12.0f %14.1f %12.3f\n", bytes, 1e6 * t, bytes / t / 1e9);
    if (floats == (size_t{4} << 20)) one_way_bandwidth = bytes / std::max(t - idle_latency, 1e-9) / 1e9;
  }
  return one_way_bandwidth;
}

// Both ways at once, as the executor moves boxes between ranks and runs its rings: each
// rank sends 16 MiB while it receives 16 MiB. This is the bandwidth the cost model gets.
double exchange_bandwidth(layerplan::Communicator& comm, double idle_latency) {
  const size_t floats = size_t{4} << 20;
  std::vector<float> out(floats, 1.0f), in(floats);
  std::vector<double> times;
  for (int r = 0; r < 11; ++r) {
    comm.barrier();
    const double t = exchange_seconds(comm, out, in, 5);
    if (r > 0) times.push_back(t);
  }
  std::sort(times.begin(), times.end());
  return 4.0 * static_cast<double>(floats) / std::max(times[times.size() / 2] - idle_latency, 1e-9) / 1e9;
}

// Back-to-back small all-reduces, as the executor issues them layer after layer.
double all_reduce_seconds(layerplan::Communicator& comm) {
  std::vector<float> small(64, 1.0f);
  comm.barrier();
  const auto a0 = Clock::now();
  for (int i = 0; i < 500; ++i) comm.all_reduce_sum(small.data(), small.size());
  return std::chrono::duration<double>(Clock::now() - a0).count() / 500;
}

// Replaces every figure by its mean over the ranks.
void average_over_ranks(layerplan::Communicator& comm, Figures& f) {
  std::vector<float> flat = {static_cast<float>(f.idle_latency), static_cast<float>(f.one_way_bandwidth),
                             static_cast<float>(f.bandwidth), static_cast<float>(f.all_reduce)};
  for (const Table& table : f.tables) {
    for (const auto& row : table) flat.insert(flat.end(), row.begin(), row.end());
  }
  comm.all_reduce_sum(flat.data(), flat.size());
  for (float& v : flat) v /= static_cast<float>(comm.size());
  f.idle_latency = flat[0];
  f.one_way_bandwidth = flat[1];
  f.bandwidth = flat[2];
  f.all_reduce = flat[3];
  size_t next = 4;
  for (Table& table : f.tables) {
    for (auto& row : table) {
      for (double& t : row) t = flat[next++];
    }
  }
}

Figures measure(layerplan::Communicator& comm, bool team) {
  Figures f;
  f.idle_latency = one_way_seconds(comm, 1, 200);
  f.one_way_bandwidth = ping_pong_bandwidth(comm, f.idle_latency);
  f.bandwidth = exchange_bandwidth(comm, f.idle_latency);
  f.all_reduce = all_reduce_seconds(comm);
  // With two ranks, all the others are the pair's other rank: those patterns are the
  // pair's and are not measured again. With --compute team, a round less the warm compute
  // (see message_by_gap).
  f.many = comm.size() > 2;
  const std::vector<Pattern> patterns = f.many ? std::vector<Pattern>{Pattern::kPairExchange, Pattern::kPairOneWay,
                                                                      Pattern::kAllExchange, Pattern::kFanIn}
                                               : std::vector<Pattern>{Pattern::kPairExchange, Pattern::kPairOneWay};
  f.tables.resize(patterns.size());
  for (size_t p = 0; p < patterns.size(); ++p) {
    for (const size_t floats : kSizes) f.tables[p].push_back(message_by_gap(comm, floats, team, patterns[p]));
  }
  average_over_ranks(comm, f);
  return f;
}

// 64 floats: (gap s, exchange s), back to back first.
std::vector<std::pair<double, double>> exchange_by_gap(const Figures& f) {
  std::vector<std::pair<double, double>> by_gap;
  for (size_t g = 0; g < kGaps.size() + 1; ++g)
    by_gap.emplace_back(g == 0 ? 0.0 : kGaps[g - 1].first, f.tables[0][0][g]);
  return by_gap;
}

// The one latency the cost model's link gets: the mean of a 64-float exchange after computing.
double link_latency(const Figures& f) {
  double latency = 0;
  for (size_t g = 1; g < kGaps.size() + 1; ++g) latency += f.tables[0][0][g] / static_cast<double>(kGaps.size());
  return latency;
}

void print_table(const char* title, const Table& table) {
  std::printf("\n%s (us) by message size after computing for\n%12s", title, "bytes");
  std::printf(" %8g ms", 0.0);
  for (const auto& [gap, rounds] : kGaps) std::printf(" %8g ms", 1e3 * gap);
  for (size_t k = 0; k < kSizes.size(); ++k) {
    std::printf("\n%12zu", 4 * kSizes[k]);
    for (const double t : table[k]) std::printf(" %11.1f", 1e6 * t);
  }
}

void print_figures(const Figures& f) {
  const auto by_gap = exchange_by_gap(f);
  std::printf("64 floats: ping-pong one-way %.1f us; back to back: all-reduce %.1f us, exchange %.1f us\n",
              1e6 * f.idle_latency, 1e6 * f.all_reduce, 1e6 * by_gap[0].second);
  std::printf("exchange of 64 floats after computing for");
  for (const auto& [gap, t] : by_gap) std::printf(" %g ms: %.1f us;", 1e3 * gap, 1e6 * t);
  print_table("exchange", f.tables[0]);
  print_table("one way, the receiver's wait", f.tables[1]);
  if (f.many) {
    print_table("exchange with every other rank at once", f.tables[2]);
    print_table("into one rank from every other, its wait", f.tables[3]);
  }
  std::printf("\nbandwidth: %.3f GB/s one way at a time, %.3f GB/s each way when both ranks send at once\n",
              f.one_way_bandwidth, f.bandwidth);
  std::printf("link: latency %.1f us, bandwidth %.3f GB/s\n", 1e6 * link_latency(f), f.bandwidth);
}

// A table by size as JSON: what a message takes beyond its bytes at `gbytes` (`peers`: the
// messages of that size a rank sends, or into one rank receives, at once).
void write_sized(std::ofstream& out, const char* key, const Table& table, double gbytes, int peers) {
  out << "], \"" << key << "\": [";
  for (size_t k = 0; k < kSizes.size(); ++k) {
    const double bytes = 4.0 * static_cast<double>(kSizes[k]);
    out << (k ? ", " : "") << "{\"bytes\": " << 4 * kSizes[k] << ", \"latency_by_gap\": [";
    for (size_t g = 0; g < table[k].size(); ++g) {
      const double gap = g == 0 ? 0.0 : kGaps[g - 1].first;
      const double beyond = std::max(0.0, table[k][g] - peers * bytes / (1e9 * gbytes));
      out << (g ? ", " : "") << "{\"gap_ms\": " << 1e3 * gap << ", \"latency_us\": " << 1e6 * beyond << "}";
    }
    out << "]}";
  }
}

// The figures as `layerplan predict --link` reads them (docs/runtime.md).
void write_json(const std::string& path, const Figures& f, int ranks) {
  const auto by_gap = exchange_by_gap(f);
  std::ofstream out(path);
  out << "{\"latency_us\": " << 1e6 * link_latency(f) << ", \"bandwidth_gbytes\": " << f.bandwidth
      << ", \"one_way_bandwidth_gbytes\": " << f.one_way_bandwidth
      << ", \"ping_pong_latency_us\": " << 1e6 * f.idle_latency << ", \"latency_by_gap\": [";
  for (size_t i = 0; i < by_gap.size(); ++i) {
    out << (i ? ", " : "") << "{\"gap_ms\": " << 1e3 * by_gap[i].first << ", \"latency_us\": " << 1e6 * by_gap[i].second
        << "}";
  }
  write_sized(out, "latency_by_size", f.tables[0], f.bandwidth, 1);
  write_sized(out, "one_way_by_size", f.tables[1], f.one_way_bandwidth, 1);
  if (f.many) {
    write_sized(out, "all_peers_by_size", f.tables[2], f.bandwidth, ranks - 1);
    write_sized(out, "fan_in_by_size", f.tables[3], f.one_way_bandwidth, ranks - 1);
    out << "], \"all_peers\": " << ranks - 1;
  } else {
    out << "]";
  }
  out << "}\n";
}

}  // namespace

int main(int argc, char** argv) {
  BenchArgs args;
  if (!parse_args(argc, argv, args)) return 2;
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
    const Figures figures = measure(*comm, args.team);
    if (comm->rank() == 0) {
      print_figures(figures);
      if (!args.json.empty()) write_json(args.json, figures, comm->size());
    }
    comm->barrier();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gloo_link_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
