// The Gloo communicator, with every rank a thread of this process (each with its own
// tcp device and connection, as separate processes would have): transfers and
// collectives give the right numbers, byte counters equal the documented volumes
// exactly, sub-groups work, and a dead or silent peer gives an error, never a hang.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "common/error.h"
#include "runtime/gloo_communicator.h"
#include "runtime/process_manager.h"

namespace layerplan {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// A fresh rendezvous directory, removed afterwards.
class StoreDir {
 public:
  StoreDir() {
    std::string templ = (fs::temp_directory_path() / "layerplan_comm_test_XXXXXX").string();
    if (!::mkdtemp(templ.data())) throw std::runtime_error("mkdtemp failed");
    path_ = templ;
  }
  ~StoreDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

GlooOptions options_for(int rank, int size, const StoreDir& dir, std::chrono::milliseconds timeout) {
  GlooOptions o;
  o.rank = rank;
  o.world_size = size;
  o.store_dir = dir.path();
  o.timeout = timeout;
  return o;
}

// Runs body(communicator) on `size` ranks, one thread each; returns each rank's error
// message ("" when it finished without one).
std::vector<std::string> run_ranks(int size, const std::function<void(Communicator&)>& body,
                                   std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
  StoreDir dir;
  std::vector<std::string> errors(static_cast<size_t>(size));
  std::vector<std::thread> threads;
  for (int r = 0; r < size; ++r) {
    threads.emplace_back([&, r] {
      try {
        auto comm = connect_gloo(options_for(r, size, dir, timeout));
        body(*comm);
      } catch (const std::exception& e) {
        errors[static_cast<size_t>(r)] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  return errors;
}

void expect_no_errors(const std::vector<std::string>& errors) {
  for (size_t r = 0; r < errors.size(); ++r) EXPECT_EQ(errors[r], "") << "rank " << r;
}

TEST(RingChunks, SplitTheBufferAsEvenlyAsPossibleFirstChunksLarger) {
  EXPECT_EQ(ring_chunk_offsets(10, 4), (std::vector<size_t>{0, 3, 6, 8, 10}));
  EXPECT_EQ(ring_chunk_offsets(2, 4), (std::vector<size_t>{0, 1, 2, 2, 2}));
  EXPECT_EQ(ring_chunk_offsets(8, 1), (std::vector<size_t>{0, 8}));
}

TEST(RingChunks, AGroupSendsTwiceItsSizeMinusOneTimesTheBuffer) {
  for (int p = 1; p <= 5; ++p) {
    for (size_t n : {0, 1, 3, 7, 64, 1001}) {
      uint64_t total = 0;
      for (int r = 0; r < p; ++r) total += ring_all_reduce_bytes_sent(n, p, r);
      EXPECT_EQ(total, 2 * static_cast<uint64_t>(p - 1) * n * 4) << "p=" << p << " n=" << n;
    }
  }
  EXPECT_EQ(ring_all_reduce_bytes_sent(8, 4, 0), 2 * 3 * 2 * 4u);  // 2(p-1)/p * n floats
}

TEST(BroadcastTree, EveryRankButTheRootHasOneParentThatListsItAsChild) {
  for (int p = 1; p <= 9; ++p) {
    for (int root = 0; root < p; ++root) {
      EXPECT_EQ(broadcast_tree_parent(p, root, root), -1);
      int children = 0;
      for (int r = 0; r < p; ++r) {
        for (int c : broadcast_tree_children(p, root, r)) {
          EXPECT_EQ(broadcast_tree_parent(p, root, c), r);
          ++children;
        }
      }
      EXPECT_EQ(children, p - 1);
    }
  }
}

TEST(GlooCommunicator, PointToPointDeliversEachTagToItsReceiveInAnyPostingOrder) {
  expect_no_errors(run_ranks(2, [](Communicator& c) {
    if (c.rank() == 0) {
      std::vector<float> a(100), b(7);
      std::iota(a.begin(), a.end(), 1.0f);
      std::iota(b.begin(), b.end(), 1000.0f);
      auto first = c.isend(a.data(), a.size(), 1, 5);
      auto second = c.isend(b.data(), b.size(), 1, 9);
      first->wait();
      second->wait();
    } else {
      std::vector<float> a(100), b(7);
      c.recv(b.data(), b.size(), 0, 9);  // tag 9 first, though it was sent second
      c.recv(a.data(), a.size(), 0, 5);
      for (size_t i = 0; i < a.size(); ++i) ASSERT_EQ(a[i], 1.0f + static_cast<float>(i));
      for (size_t i = 0; i < b.size(); ++i) ASSERT_EQ(b[i], 1000.0f + static_cast<float>(i));
    }
  }));
}

TEST(GlooCommunicator, SimultaneousExchangeWithPostedTransfersDoesNotDeadlock) {
  expect_no_errors(run_ranks(3, [](Communicator& c) {
    const int right = (c.rank() + 1) % 3, left = (c.rank() + 2) % 3;
    std::vector<float> out(1 << 16, static_cast<float>(c.rank())), in(1 << 16, -1.0f);
    auto send = c.isend(out.data(), out.size(), right, 1);
    auto recv = c.irecv(in.data(), in.size(), left, 1);
    recv->wait();
    send->wait();
    ASSERT_EQ(in.front(), static_cast<float>(left));
    ASSERT_EQ(in.back(), static_cast<float>(left));
  }));
}

TEST(GlooCommunicator, AllReduceSumsOnOneToFourRanksForSizesThatDoNotDivide) {
  for (int p = 1; p <= 4; ++p) {
    for (size_t n : {1, 2, 5, 1000, 65537}) {
      expect_no_errors(run_ranks(p, [n](Communicator& c) {
        std::vector<float> data(n);
        for (size_t i = 0; i < n; ++i) data[i] = static_cast<float>((c.rank() + 1) * static_cast<int>(i % 97));
        c.all_reduce_sum(data.data(), n);
        const int q = c.size();
        for (size_t i = 0; i < n; ++i) {
          ASSERT_EQ(data[i], static_cast<float>(q * (q + 1) / 2 * static_cast<int>(i % 97))) << "element " << i;
        }
      }));
    }
  }
}

TEST(GlooCommunicator, AllReduceCountsExactlyTheRingVolumeToTheRightNeighbour) {
  const size_t n = 1001;
  expect_no_errors(run_ranks(4, [n](Communicator& c) {
    std::vector<float> data(n, 1.0f);
    c.all_reduce_sum(data.data(), n);
    const ByteCounters& k = c.counters();
    const int right = (c.rank() + 1) % 4;
    for (int peer = 0; peer < 4; ++peer) {
      const uint64_t expected = peer == right ? ring_all_reduce_bytes_sent(n, 4, c.rank()) : 0;
      EXPECT_EQ(k.sent_to(peer, TrafficKind::kCollective), expected) << "rank " << c.rank() << " to " << peer;
      EXPECT_EQ(k.sent_to(peer, TrafficKind::kPointToPoint), 0u);
    }
  }));
}

TEST(GlooCommunicator, BroadcastFromEveryRootAndItsBytes) {
  for (int root = 0; root < 3; ++root) {
    expect_no_errors(run_ranks(3, [root](Communicator& c) {
      std::vector<float> data(333, c.rank() == root ? 42.0f : 0.0f);
      c.broadcast(data.data(), data.size(), root);
      for (float x : data) ASSERT_EQ(x, 42.0f);
      for (int peer = 0; peer < 3; ++peer) {
        const auto children = broadcast_tree_children(3, root, c.rank());
        const bool child = std::find(children.begin(), children.end(), peer) != children.end();
        EXPECT_EQ(c.counters().sent_to(peer, TrafficKind::kCollective), child ? 333u * 4 : 0u);
      }
    }));
  }
}

TEST(GlooCommunicator, PointToPointBytesAreCountedPerPeerApartFromCollectives) {
  expect_no_errors(run_ranks(3, [](Communicator& c) {
    std::vector<float> buf(10 * (c.rank() + 1), 1.0f);
    std::vector<float> in(100);
    if (c.rank() == 0) {
      c.send(buf.data(), 10, 1, 0);
      c.send(buf.data(), 3, 2, 0);
      c.send(buf.data(), 4, 2, 1);
    } else {
      c.recv(in.data(), c.rank() == 1 ? 10 : 3, 0, 0);
      if (c.rank() == 2) c.recv(in.data(), 4, 0, 1);
    }
    c.barrier();
    const ByteCounters& k = c.counters();
    if (c.rank() == 0) {
      EXPECT_EQ(k.sent_to(1, TrafficKind::kPointToPoint), 40u);
      EXPECT_EQ(k.sent_to(2, TrafficKind::kPointToPoint), 28u);
      EXPECT_EQ(k.total(TrafficKind::kPointToPoint), 68u);
    } else {
      EXPECT_EQ(k.total(TrafficKind::kPointToPoint), 0u);
    }
    EXPECT_EQ(k.total(TrafficKind::kCollective), 0u) << "a barrier carries no data";
  }));
}

TEST(GlooCommunicator, SubGroupsReduceAmongTheirMembersOnlyAndCountGlobalRanks) {
  expect_no_errors(run_ranks(4, [](Communicator& c) {
    // Replicas of two shards: {0, 2} and {1, 3}; then singletons, then the world again.
    const std::vector<int> members = c.rank() % 2 == 0 ? std::vector<int>{0, 2} : std::vector<int>{1, 3};
    auto group = c.create_group(members);
    ASSERT_EQ(group->size(), 2);
    ASSERT_EQ(group->global_rank(group->rank()), c.rank());
    std::vector<float> data(6, static_cast<float>(c.rank()));
    group->all_reduce_sum(data.data(), data.size());
    for (float x : data) ASSERT_EQ(x, c.rank() % 2 == 0 ? 2.0f : 4.0f);
    const int partner = c.rank() ^ 2;
    EXPECT_EQ(c.counters().sent_to(partner, TrafficKind::kCollective), ring_all_reduce_bytes_sent(6, 2, group->rank()));
    const int me = c.rank();
    auto alone = c.create_group(std::vector<int>{me});
    alone->all_reduce_sum(data.data(), data.size());
    alone->barrier();
    std::vector<float> ones(5, 1.0f);
    c.all_reduce_sum(ones.data(), ones.size());
    for (float x : ones) ASSERT_EQ(x, 4.0f);
  }));
}

TEST(GlooCommunicator, BadGroupListsAreRejected) {
  expect_no_errors(run_ranks(2, [](Communicator& c) {
    EXPECT_THROW(c.create_group(std::vector<int>{}), std::invalid_argument);
    EXPECT_THROW(c.create_group(std::vector<int>{1, 0}), std::invalid_argument);
    EXPECT_THROW(c.create_group(std::vector<int>{0, 5}), std::invalid_argument);
    EXPECT_THROW(c.create_group(std::vector<int>{1 - c.rank()}), std::invalid_argument);  // not a member
    float x = 0;
    EXPECT_THROW(c.send(&x, 1, c.rank(), 0), std::invalid_argument);
    EXPECT_THROW(c.send(&x, 1, 2, 0), std::invalid_argument);
  }));
}

TEST(GlooCommunicator, APeerThatNeverAnswersGivesAnErrorNamingItAfterTheTimeout) {
  const auto start = std::chrono::steady_clock::now();
  const auto errors = run_ranks(
      2,
      [](Communicator& c) {
        if (c.rank() == 0) {
          float x[4];
          c.recv(x, 4, 1, 3);  // rank 1 never sends
        } else {
          std::this_thread::sleep_for(std::chrono::seconds(6));
        }
      },
      std::chrono::seconds(3));
  EXPECT_THAT(errors[0], HasSubstr("rank 0: receive of 4 floats from rank 1 (tag 3)"));
  EXPECT_EQ(errors[1], "");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
}

TEST(GlooCommunicator, APeerThatLeavesMidCollectiveGivesAnErrorNotAHang) {
  const auto errors = run_ranks(
      3,
      [](Communicator& c) {
        if (c.rank() == 2) return;  // leaves: its connections close
        std::vector<float> data(1000, 1.0f);
        c.all_reduce_sum(data.data(), data.size());
      },
      std::chrono::seconds(5));
  EXPECT_THAT(errors[0], HasSubstr("all_reduce_sum"));
  EXPECT_THAT(errors[1], HasSubstr("all_reduce_sum"));
  EXPECT_EQ(errors[2], "");
}

TEST(GlooCommunicator, AMissingRankMakesTheRendezvousFailAfterTheTimeout) {
  StoreDir dir;
  try {
    connect_gloo(options_for(0, 2, dir, std::chrono::seconds(1)));
    FAIL() << "connected without rank 1";
  } catch (const CommError& e) {
    EXPECT_THAT(e.what(), HasSubstr("could not connect to the other 1 rank(s)"));
    EXPECT_THAT(e.what(), HasSubstr(dir.path()));
  }
}

TEST(GlooCommunicator, BadOptionsAreUsageErrorsNamingTheValue) {
  StoreDir dir;
  auto bad = options_for(3, 2, dir, std::chrono::seconds(1));
  EXPECT_THROW(connect_gloo(bad), UsageError);
  auto missing = options_for(0, 1, dir, std::chrono::seconds(1));
  missing.store_dir = dir.path() + "/nope";
  try {
    connect_gloo(missing);
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("/nope"));
  }
  auto iface = options_for(0, 1, dir, std::chrono::seconds(1));
  iface.interface = "nope0";
  EXPECT_THROW(connect_gloo(iface), UsageError);
}

TEST(GlooOptionsFromEnv, ReadsTheLauncherVariablesAndRejectsMalformedOnes) {
  ::setenv("LAYERPLAN_RANK", "1", 1);
  ::setenv("LAYERPLAN_WORLD_SIZE", "3", 1);
  ::setenv("LAYERPLAN_STORE_DIR", "/tmp/x", 1);
  ::setenv("LAYERPLAN_COMM_TIMEOUT_S", "7", 1);
  GlooOptions o = gloo_options_from_env();
  EXPECT_EQ(o.rank, 1);
  EXPECT_EQ(o.world_size, 3);
  EXPECT_EQ(o.store_dir, "/tmp/x");
  EXPECT_EQ(o.timeout, std::chrono::seconds(7));
  ::setenv("LAYERPLAN_RANK", "one", 1);
  try {
    gloo_options_from_env();
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("LAYERPLAN_RANK='one'"));
  }
  ::unsetenv("LAYERPLAN_RANK");
  EXPECT_THROW(gloo_options_from_env(), UsageError);
  ::unsetenv("LAYERPLAN_WORLD_SIZE");
  ::unsetenv("LAYERPLAN_STORE_DIR");
  ::unsetenv("LAYERPLAN_COMM_TIMEOUT_S");
}

TEST(WorldFromEnv, OneProcessWithoutLauncherOrSlurmStep) {
  for (const char* name : {"LAYERPLAN_RANK", "SLURM_STEP_NUM_TASKS", "PMI_FD"}) ::unsetenv(name);
  EXPECT_FALSE(world_from_env().has_value());
  ::setenv("SLURM_STEP_NUM_TASKS", "1", 1);  // srun -n1: still one process
  EXPECT_FALSE(world_from_env().has_value());
  ::unsetenv("SLURM_STEP_NUM_TASKS");
}

TEST(WorldFromEnv, AStepOfSeveralTasksWithoutPmiSaysToUseSrunMpiPmi2) {
  ::unsetenv("LAYERPLAN_RANK");
  ::unsetenv("PMI_FD");
  ::setenv("SLURM_STEP_NUM_TASKS", "3", 1);
  ::setenv("SLURM_PROCID", "2", 1);
  try {
    world_from_env();
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("task 2 of 3"));
    EXPECT_THAT(e.what(), HasSubstr("srun --mpi=pmi2"));
    EXPECT_THAT(e.what(), HasSubstr("MpiDefault=pmi2"));
  }
  ::unsetenv("SLURM_STEP_NUM_TASKS");
  ::unsetenv("SLURM_PROCID");
}

TEST(WorldFromEnv, SrunTasksUnderPmi2TakeTheirRankFromSlurm) {
  ::unsetenv("LAYERPLAN_RANK");
  ::setenv("PMI_FD", "1000", 1);
  ::setenv("SLURM_STEP_NUM_TASKS", "3", 1);
  ::setenv("SLURM_PROCID", "2", 1);
  ::setenv("SLURM_LOCALID", "0", 1);
  const std::optional<GlooOptions> o = world_from_env();
  ASSERT_TRUE(o.has_value());
  EXPECT_EQ(o->rendezvous, Rendezvous::kPmi2);
  EXPECT_EQ(o->rank, 2);
  EXPECT_EQ(o->world_size, 3);
  EXPECT_EQ(o->local_rank, 0);
  // The launcher's variables win: `layerplan launch` inside an srun step uses its directory.
  ::setenv("LAYERPLAN_RANK", "1", 1);
  ::setenv("LAYERPLAN_WORLD_SIZE", "2", 1);
  ::setenv("LAYERPLAN_STORE_DIR", "/tmp/x", 1);
  const std::optional<GlooOptions> launched = world_from_env();
  ASSERT_TRUE(launched.has_value());
  EXPECT_EQ(launched->rendezvous, Rendezvous::kDirectory);
  EXPECT_EQ(launched->world_size, 2);
  for (const char* name : {"LAYERPLAN_RANK", "LAYERPLAN_WORLD_SIZE", "LAYERPLAN_STORE_DIR", "PMI_FD",
                           "SLURM_STEP_NUM_TASKS", "SLURM_PROCID", "SLURM_LOCALID"}) {
    ::unsetenv(name);
  }
}

TEST(WorldFromEnv, APmiFdThatLeadsNowhereIsOneUsageError) {
  // An fd that is not open: PMI2_Init fails (libpmi2 is installed by scripts/setup).
  ::setenv("PMI_FD", "1000", 1);
  GlooOptions o;
  o.rendezvous = Rendezvous::kPmi2;
  o.rank = 0;
  o.world_size = 2;
  try {
    connect_gloo(o);
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("PMI"));
  }
  ::unsetenv("PMI_FD");
}

}  // namespace
}  // namespace layerplan

namespace layerplan {
namespace {

TEST(ShareFromRank0, EveryRankGetsRankZerosBytesThroughTheDirectory) {
  StoreDir dir;
  const int size = 3;
  std::vector<std::vector<char>> got(size);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < size; ++rank) {
    threads.emplace_back([&, rank] {
      // Each rank offers different bytes; only rank 0's may arrive anywhere.
      const std::vector<char> mine(128, static_cast<char>('a' + rank));
      got[static_cast<size_t>(rank)] =
          share_from_rank0(options_for(rank, size, dir, std::chrono::seconds(30)), "nccl-id", mine);
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& bytes : got) EXPECT_EQ(bytes, std::vector<char>(128, 'a'));
}

TEST(ShareFromRank0, AMissingRankZeroIsACommErrorAfterTheTimeout) {
  StoreDir dir;
  try {
    share_from_rank0(options_for(1, 2, dir, std::chrono::milliseconds(200)), "nccl-id", {});
    FAIL();
  } catch (const CommError& e) {
    EXPECT_THAT(e.what(), HasSubstr("rank 1"));
    EXPECT_THAT(e.what(), HasSubstr("'nccl-id' from rank 0"));
  }
}

TEST(WorldFromEnv, SrunTasksUnderPmixTakeTheirRankFromSlurm) {
  for (const char* name : {"LAYERPLAN_RANK", "PMI_FD"}) ::unsetenv(name);
  ::setenv("PMIX_RANK", "1", 1);
  ::setenv("SLURM_STEP_NUM_TASKS", "6", 1);
  ::setenv("SLURM_PROCID", "1", 1);
  ::setenv("SLURM_LOCALID", "1", 1);
  EXPECT_EQ(process_manager_from_env(), ProcessManagerKind::kPmix);
  const std::optional<GlooOptions> o = world_from_env();
  ASSERT_TRUE(o.has_value());
  EXPECT_EQ(o->rendezvous, Rendezvous::kPmix);
  EXPECT_EQ(o->rank, 1);
  EXPECT_EQ(o->world_size, 6);
  EXPECT_EQ(o->local_rank, 1);
  // PMI_FD wins when both are set (srun --mpi=pmi2 started it).
  ::setenv("PMI_FD", "1000", 1);
  EXPECT_EQ(process_manager_from_env(), ProcessManagerKind::kPmi2);
  for (const char* name : {"PMIX_RANK", "PMI_FD", "SLURM_STEP_NUM_TASKS", "SLURM_PROCID", "SLURM_LOCALID"}) {
    ::unsetenv(name);
  }
  EXPECT_EQ(process_manager_from_env(), ProcessManagerKind::kNone);
}

}  // namespace
}  // namespace layerplan
