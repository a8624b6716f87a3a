// layerplan_test_worker: a rank for the launcher tests. It joins the Gloo world from the
// launcher's environment and runs a few steps of collectives (in the world and in a group
// of the even or the odd ranks) and point-to-point transfers, checking every result and,
// at the end, that its byte counters equal the documented volumes exactly. It can be told
// to misbehave at a step:
//
//   --steps N              steps to run (default 3)
//   --count N              floats per transfer (default 1000)
//   --fail-rank R          the rank that misbehaves (default 0)
//   --exit-at-step S       rank R prints a message on stderr and exits with --exit-code (default 3)
//   --abort-at-step S      rank R calls abort() (killed by SIGABRT)
//   --hang-at-step S       rank R sleeps forever
//   --ignore-sigterm       this rank ignores SIGTERM (so only SIGKILL stops it)
//   --no-comm              do not join the communicator (launcher-only tests)
//   --print-env            print the rank's environment and CPU affinity first
//   --sleep-ms N           sleep this long each step (default 0)
//
// Exit codes: 0 done, 1 a communication error or a wrong result, 2 bad arguments.
#include <sched.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <thread>
#include <vector>

#include "common/error.h"
#include "runtime/gloo_communicator.h"

namespace {

struct Args {
  int steps = 3;
  size_t count = 1000;
  int fail_rank = 0;
  int exit_at = -1, abort_at = -1, hang_at = -1, exit_code = 3;
  bool ignore_sigterm = false, no_comm = false, print_env = false;
  int sleep_ms = 0;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    const auto value = [&]() -> long {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "test_worker: %s needs a value\n", flag.c_str());
        std::exit(2);
      }
      return std::strtol(argv[++i], nullptr, 10);
    };
    if (flag == "--steps")
      a.steps = static_cast<int>(value());
    else if (flag == "--count")
      a.count = static_cast<size_t>(value());
    else if (flag == "--fail-rank")
      a.fail_rank = static_cast<int>(value());
    else if (flag == "--exit-at-step")
      a.exit_at = static_cast<int>(value());
    else if (flag == "--exit-code")
      a.exit_code = static_cast<int>(value());
    else if (flag == "--abort-at-step")
      a.abort_at = static_cast<int>(value());
    else if (flag == "--hang-at-step")
      a.hang_at = static_cast<int>(value());
    else if (flag == "--sleep-ms")
      a.sleep_ms = static_cast<int>(value());
    else if (flag == "--ignore-sigterm")
      a.ignore_sigterm = true;
    else if (flag == "--no-comm")
      a.no_comm = true;
    else if (flag == "--print-env")
      a.print_env = true;
    else {
      std::fprintf(stderr, "test_worker: unknown flag '%s'\n", flag.c_str());
      std::exit(2);
    }
  }
  return a;
}

void print_env() {
  const auto get = [](const char* name) {
    const char* v = std::getenv(name);
    return v ? v : "(unset)";
  };
  cpu_set_t set;
  CPU_ZERO(&set);
  std::string cpus;
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    for (int c = 0; c < CPU_SETSIZE; ++c) {
      if (CPU_ISSET(c, &set)) cpus += (cpus.empty() ? "" : ",") + std::to_string(c);
    }
  }
  std::printf(
      "env pid=%d rank=%s world=%s local_rank=%s store=%s omp=%s backend=%s spin=%s cpus=%s torch_rank=%s "
      "torch_local_rank=%s torch_world=%s torch_local_world=%s\n",
      static_cast<int>(getpid()), get("LAYERPLAN_RANK"), get("LAYERPLAN_WORLD_SIZE"), get("LAYERPLAN_LOCAL_RANK"),
      get("LAYERPLAN_STORE_DIR"), get("OMP_NUM_THREADS"), get("LAYERPLAN_BACKEND"), get("GOMP_SPINCOUNT"), cpus.c_str(),
      get("RANK"), get("LOCAL_RANK"), get("WORLD_SIZE"), get("LOCAL_WORLD_SIZE"));
  std::fflush(stdout);
}

void misbehave(const Args& a, int rank, int step) {
  if (rank != a.fail_rank) return;
  if (step == a.exit_at) {
    std::fprintf(stderr, "test_worker: rank %d exits with %d at step %d as told\n", rank, a.exit_code, step);
    std::exit(a.exit_code);
  }
  if (step == a.abort_at) {
    std::fprintf(stderr, "test_worker: rank %d aborts at step %d as told\n", rank, step);
    std::abort();
  }
  if (step == a.hang_at) {
    std::printf("rank %d hangs at step %d as told\n", rank, step);
    std::fflush(stdout);
    for (;;) pause();
  }
}

void check(bool ok, const std::string& what) {
  if (!ok) throw std::runtime_error("wrong result: " + what);
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = parse(argc, argv);
  if (a.ignore_sigterm) std::signal(SIGTERM, SIG_IGN);
  if (a.print_env) print_env();
  try {
    if (a.no_comm) {
      const char* r = std::getenv("LAYERPLAN_RANK");
      const int rank = r ? std::atoi(r) : 0;
      for (int step = 0; step < a.steps; ++step) {
        misbehave(a, rank, step);
        std::this_thread::sleep_for(std::chrono::milliseconds(a.sleep_ms));
        std::printf("step %d ok\n", step);
        std::fflush(stdout);
      }
      std::printf("done\n");
      return 0;
    }
    auto comm = layerplan::connect_gloo(layerplan::gloo_options_from_env());
    const int rank = comm->rank(), p = comm->size();
    // Replica-style groups: the even ranks and the odd ranks.
    std::vector<int> members;
    for (int r = rank % 2; r < p; r += 2) members.push_back(r);
    auto group = comm->create_group(members);
    const int q = group->size();
    // What the counters must say at the end, by global peer (docs/runtime.md).
    using layerplan::TrafficKind;
    std::vector<uint64_t> expected_p2p(static_cast<size_t>(p)), expected_collective(static_cast<size_t>(p));
    for (int step = 0; step < a.steps; ++step) {
      misbehave(a, rank, step);
      std::this_thread::sleep_for(std::chrono::milliseconds(a.sleep_ms));
      std::vector<float> data(a.count, static_cast<float>(rank + 1));
      comm->barrier();
      const auto start = std::chrono::steady_clock::now();
      comm->all_reduce_sum(data.data(), data.size());
      const double reduce_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      for (float x : data) check(x == static_cast<float>(p * (p + 1)) / 2.0f, "all_reduce_sum");
      if (p > 1)
        expected_collective[static_cast<size_t>((rank + 1) % p)] +=
            layerplan::ring_all_reduce_bytes_sent(a.count, p, rank);
      std::vector<float> g(a.count, 1.0f);
      group->all_reduce_sum(g.data(), g.size());
      for (float x : g) check(x == static_cast<float>(q), "group all_reduce_sum");
      if (q > 1) {
        expected_collective[static_cast<size_t>(group->global_rank((group->rank() + 1) % q))] +=
            layerplan::ring_all_reduce_bytes_sent(a.count, q, group->rank());
      }
      const int root = step % p;
      std::vector<float> b(a.count, rank == root ? static_cast<float>(step) : -1.0f);
      comm->broadcast(b.data(), b.size(), root);
      for (float x : b) check(x == static_cast<float>(step), "broadcast");
      for (int child : layerplan::broadcast_tree_children(p, root, rank)) {
        expected_collective[static_cast<size_t>(child)] += a.count * sizeof(float);
      }
      if (p > 1) {
        std::vector<float> out(a.count, static_cast<float>(rank)), in(a.count);
        auto s = comm->isend(out.data(), out.size(), (rank + 1) % p, static_cast<uint32_t>(step));
        comm->recv(in.data(), in.size(), (rank + p - 1) % p, static_cast<uint32_t>(step));
        s->wait();
        for (float x : in) check(x == static_cast<float>((rank + p - 1) % p), "ring exchange");
        expected_p2p[static_cast<size_t>((rank + 1) % p)] += a.count * sizeof(float);
      }
      comm->barrier();
      std::printf("step %d ok (all_reduce_sum %.4f s)\n", step, reduce_s);
      std::fflush(stdout);
    }
    const layerplan::ByteCounters& k = comm->counters();
    for (int peer = 0; peer < p; ++peer) {
      const size_t i = static_cast<size_t>(peer);
      check(k.sent_to(peer, TrafficKind::kPointToPoint) == expected_p2p[i] &&
                k.sent_to(peer, TrafficKind::kCollective) == expected_collective[i],
            "byte counters for rank " + std::to_string(peer) + ": p2p " +
                std::to_string(k.sent_to(peer, TrafficKind::kPointToPoint)) + " (expected " +
                std::to_string(expected_p2p[i]) + "), collective " +
                std::to_string(k.sent_to(peer, TrafficKind::kCollective)) + " (expected " +
                std::to_string(expected_collective[i]) + ")");
    }
    std::printf("bytes p2p=%llu collective=%llu (as expected)\n",
                static_cast<unsigned long long>(k.total(TrafficKind::kPointToPoint)),
                static_cast<unsigned long long>(k.total(TrafficKind::kCollective)));
    std::printf("done\n");
    return 0;
  } catch (const layerplan::UsageError& e) {
    std::fprintf(stderr, "test_worker: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "test_worker: %s\n", e.what());
    return 1;
  }
}
