// layerplan_rendezvous_probe: a rank that joins the world as `layerplan train` does
// (world_from_env, connect_gloo) and reports how long that took: from the start of the
// process to its connected world, which under `srun --mpi=pmi2` is PMI2_Init, the PMI-2
// exchange of Gloo's addresses and the full-mesh connect. Then rank 0 gives the others a
// 128-byte id through the same rendezvous (share_from_rank0, as NCCL's unique id goes),
// and every rank checks it got rank 0's bytes. Rank 0 prints
//   rendezvous ranks N max_ms X (per rank: a b c) id_ms Y all-reduce ok
// after checking one all-reduce. tests/slurm/pmi2_training.sh runs it (not a test itself).
// Exit codes: 0 done, 1 a wrong all-reduce or a communication error, 2 not a rank.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "common/error.h"
#include "runtime/gloo_communicator.h"

namespace {

// Rank 0 shares 128 bytes only it knows (its process id in each); every rank then checks
// that the sum over ranks of what each got is `size` times its own copy.
bool id_is_shared(const layerplan::GlooOptions& world, layerplan::Communicator& comm) {
  std::vector<char> id(128, 0);
  const auto pid = static_cast<unsigned>(::getpid());
  for (size_t i = 0; i < id.size(); ++i) id[i] = static_cast<char>((pid >> (i % 4 * 8)) + i);
  const std::vector<char> got = layerplan::share_from_rank0(world, "probe-id", id);
  if (got.size() != id.size()) {
    std::fprintf(stderr, "rank %d: shared id of %zu bytes, expected 128\n", world.rank, got.size());
    return false;
  }
  std::vector<float> sum(got.size());
  for (size_t i = 0; i < got.size(); ++i) sum[i] = static_cast<float>(static_cast<unsigned char>(got[i]));
  comm.all_reduce_sum(sum.data(), sum.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (sum[i] != static_cast<float>(comm.size()) * static_cast<float>(static_cast<unsigned char>(got[i]))) {
      std::fprintf(stderr, "rank %d: the shared id differs between ranks at byte %zu\n", world.rank, i);
      return false;
    }
  }
  return true;
}

}  // namespace

int main() {
  const auto start = std::chrono::steady_clock::now();
  try {
    const std::optional<layerplan::GlooOptions> world = layerplan::world_from_env();
    if (!world) {
      std::fprintf(stderr, "rendezvous_probe: not one of several ranks (run it under srun or layerplan launch)\n");
      return 2;
    }
    const auto comm = layerplan::connect_gloo(*world);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    const int size = comm->size();
    if (!id_is_shared(*world, *comm)) return 1;
    const double id_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() - ms;
    std::vector<float> times(static_cast<size_t>(size), 0.0f);
    times[static_cast<size_t>(comm->rank())] = static_cast<float>(ms);
    std::vector<float> ones(16, 1.0f);
    comm->all_reduce_sum(times.data(), times.size());
    comm->all_reduce_sum(ones.data(), ones.size());
    for (float v : ones) {
      if (v != static_cast<float>(size)) {
        std::fprintf(stderr, "rank %d: all-reduce gave %g, expected %d\n", comm->rank(), static_cast<double>(v), size);
        return 1;
      }
    }
    if (comm->rank() == 0) {
      float max_ms = 0;
      std::string each;
      for (float t : times) {
        max_ms = std::max(max_ms, t);
        each += (each.empty() ? "" : " ") + std::to_string(static_cast<int>(t + 0.5f));
      }
      std::printf("rendezvous ranks %d max_ms %.1f (per rank: %s) id_ms %.1f all-reduce ok\n", size,
                  static_cast<double>(max_ms), each.c_str(), id_ms);
    }
    comm->barrier();
    return 0;
  } catch (const layerplan::UsageError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
