// The link between two ranks of `layerplan launch` on this machine, as the cost model
// describes a link: latency and one-way bandwidth, measured through the Gloo communicator
// that `layerplan train` uses.
//  - Rank 0 and rank 1 bounce messages of growing size; a one-way time is half the median
//    round trip. The bandwidth is the bytes of a 16 MiB message over its one-way time less
//    the one-way time of a 4-byte message.
//  - The latency is what a message costs when messages follow one another as the executor
//    sends them: 500 back-to-back all-reduces of 64 floats, each priced by the cost model as
//    2(p-1) = 2 latencies on 2 ranks. With each rank pinned to one core this is far more
//    than the idle ping-pong's one-way time (about 0.5 ms against 0.05 ms here): Gloo's I/O
//    thread shares the core with the rank's compute thread.
// `layerplan predict --link-gbytes --link-latency-us` takes the two figures.
//
//   build/layerplan launch --nproc 2 -- build/bench/gloo_link_bench [--json FILE]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <string>
#include <vector>

#include "runtime/gloo_communicator.h"

namespace {

using Clock = std::chrono::steady_clock;

// Half the median round trip of `floats` floats from rank 0 to rank 1 and back.
double one_way_seconds(layerplan::Communicator& comm, size_t floats, int rounds) {
  std::vector<float> buffer(floats, 1.0f);
  std::vector<double> trips;
  const int peer = 1 - comm.rank();
  for (int r = 0; r < rounds + 1; ++r) {  // the first round connects and warms up
    comm.barrier();
    const auto t0 = Clock::now();
    if (comm.rank() == 0) {
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

}  // namespace

int main(int argc, char** argv) {
  std::string json;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--json") == 0 && i + 1 < argc) {
      json = argv[++i];
    } else {
      std::fprintf(stderr, "gloo_link_bench: unknown argument '%s' (expected --json FILE)\n", argv[i]);
      return 2;
    }
  }
  try {
    const layerplan::GlooOptions options = layerplan::gloo_options_from_env();
    if (options.world_size != 2) {
      std::fprintf(stderr, "gloo_link_bench: run it on 2 ranks (layerplan launch --nproc 2), not %d\n",
                   options.world_size);
      return 2;
    }
    const auto comm = layerplan::connect_gloo(options);
    const double idle_latency = one_way_seconds(*comm, 1, 200);
    if (comm->rank() == 0) std::printf("%12s %14s %12s\n", "bytes", "one-way us", "GB/s");
    double bandwidth = 0;
    for (const size_t floats : {size_t{1}, size_t{256}, size_t{4096}, size_t{65536}, size_t{1} << 20, size_t{4} << 20}) {
      const double t = one_way_seconds(*comm, floats, floats >= (size_t{1} << 20) ? 10 : 50);
      const double bytes = 4.0 * static_cast<double>(floats);
      if (comm->rank() == 0) std::printf("%12.0f %14.1f %12.3f\n", bytes, 1e6 * t, bytes / t / 1e9);
      if (floats == (size_t{4} << 20)) bandwidth = bytes / std::max(t - idle_latency, 1e-9) / 1e9;
    }
    // Back-to-back small all-reduces, as the executor issues them layer after layer.
    std::vector<float> small(64, 1.0f);
    comm->barrier();
    const auto a0 = Clock::now();
    for (int i = 0; i < 500; ++i) comm->all_reduce_sum(small.data(), small.size());
    const double all_reduce = std::chrono::duration<double>(Clock::now() - a0).count() / 500;
    const double latency = all_reduce / 2;
    if (comm->rank() == 0) {
      std::printf("ping-pong one-way latency %.1f us; all-reduce of 64 floats, back to back: %.1f us each\n",
                  1e6 * idle_latency, 1e6 * all_reduce);
    }
    if (comm->rank() == 0) {
      std::printf("link: latency %.1f us, bandwidth %.3f GB/s\n", 1e6 * latency, bandwidth);
      if (!json.empty()) {
        std::ofstream out(json);
        out << "{\"latency_us\": " << 1e6 * latency << ", \"bandwidth_gbytes\": " << bandwidth
            << ", \"ping_pong_latency_us\": " << 1e6 * idle_latency << "}\n";
      }
    }
    comm->barrier();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gloo_link_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
