// The link figures `layerplan predict --link` prices messages with: by compute gap, by
// message size (linear in log bytes between measured sizes), and the file's bad input.
#include "predict/link_figures.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "common/error.h"
#include "tests/scratch_dir.h"

namespace layerplan {
namespace {

using ::testing::HasSubstr;

LinkFigures read(const ScratchDir& dir, const std::string& text) {
  const std::string file = dir.file("link.json");
  std::ofstream(file) << text;
  return read_link_figures(file);
}

// 256 bytes: 100 us back to back, 1100 us after 1 ms of computing; 65536 bytes: 10x that.
constexpr const char* kBySize =
    R"({"latency_us": 100, "bandwidth_gbytes": 1, "latency_by_gap": [{"gap_ms": 0, "latency_us": 100}],)"
    R"( "latency_by_size": [)"
    R"({"bytes": 65536, "latency_by_gap": [{"gap_ms": 0, "latency_us": 1000}, {"gap_ms": 1, "latency_us": 11000}]},)"
    R"( {"bytes": 256, "latency_by_gap": [{"gap_ms": 0, "latency_us": 100}, {"gap_ms": 1, "latency_us": 1100}]}]})";

TEST(LinkFigures, AMessageCostsTheFigureOfItsGapAndSize) {
  ScratchDir dir;
  const LinkFigures link = read(dir, kBySize);
  ASSERT_EQ(link.latency_by_size.size(), 2u);
  EXPECT_EQ(link.latency_by_size[0].bytes, 256);  // sorted by size
  EXPECT_NEAR(link.message_s(0, 256), 100e-6, 1e-12);
  EXPECT_NEAR(link.message_s(1e-3, 256), 1100e-6, 1e-12);
  EXPECT_NEAR(link.message_s(0.5e-3, 256), 600e-6, 1e-12);  // linear in the gap
  EXPECT_NEAR(link.message_s(0, 65536), 1000e-6, 1e-12);
  // 4096 bytes lie halfway between 256 and 65536 in log bytes (16x each way).
  EXPECT_NEAR(link.message_s(0, 4096), 550e-6, 1e-12);
  EXPECT_NEAR(link.message_s(1e-3, 4096), 6050e-6, 1e-12);
  // Outside the measured sizes and gaps, the nearest figure.
  EXPECT_NEAR(link.message_s(0, 4), 100e-6, 1e-12);
  EXPECT_NEAR(link.message_s(0, 0), 100e-6, 1e-12);
  EXPECT_NEAR(link.message_s(5e-3, 1 << 24), 11000e-6, 1e-12);
}

TEST(LinkFigures, WithoutSizesEveryMessageCostsTheSmallMessagesFigure) {
  ScratchDir dir;
  const LinkFigures by_gap = read(dir, R"({"latency_us": 7, "bandwidth_gbytes": 2, "latency_by_gap": [)"
                                       R"({"gap_ms": 0, "latency_us": 10}, {"gap_ms": 2, "latency_us": 30}]})");
  EXPECT_NEAR(by_gap.message_s(1e-3, 1 << 20), 20e-6, 1e-12);
  EXPECT_NEAR(by_gap.message_s(1e-3), 20e-6, 1e-12);
  const LinkFigures flat = read(dir, R"({"latency_us": 7, "bandwidth_gbytes": 2})");
  EXPECT_NEAR(flat.message_s(1e-3, 1 << 20), 7e-6, 1e-12);
  EXPECT_EQ(flat.gbytes, 2);
}

TEST(LinkFigures, BadSizesAreNamed) {
  ScratchDir dir;
  const std::string head = R"({"latency_us": 5, "bandwidth_gbytes": 1, "latency_by_size": )";
  const struct {
    std::string sizes, message;
  } cases[] = {
      {"[]", "latency_by_size: expected a list"},
      {R"([{"latency_by_gap": [{"gap_ms": 0, "latency_us": 1}]}])", "'bytes'"},
      {R"([{"bytes": 0, "latency_by_gap": [{"gap_ms": 0, "latency_us": 1}]}])", "bytes 0"},
      {R"([{"bytes": 8}])", "each size needs its latency_by_gap"},
      {R"([{"bytes": 8, "latency_by_gap": [{"gap_ms": 0, "latency_us": -1}]}])", "latency_us"},
      {R"([{"bytes": 8, "latency_by_gap": [{"gap_ms": 0, "latency_us": 1}]},)"
       R"( {"bytes": 8, "latency_by_gap": [{"gap_ms": 0, "latency_us": 2}]}])",
       "one size twice"},
  };
  for (const auto& c : cases) {
    try {
      read(dir, head + c.sizes + "}");
      ADD_FAILURE() << "accepted " << c.sizes;
    } catch (const UsageError& e) {
      EXPECT_THAT(e.what(), HasSubstr(c.message)) << c.sizes;
      EXPECT_THAT(e.what(), HasSubstr("link.json")) << c.sizes;
    }
  }
  // The one-way list is read and checked the same way.
  try {
    read(dir, R"({"latency_us": 5, "bandwidth_gbytes": 1, "one_way_by_size": [{"bytes": 0, "latency_by_gap": []}]})");
    ADD_FAILURE() << "accepted a one-way size of 0 bytes";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("one_way_by_size: bytes 0"));
  }
}

TEST(LinkFigures, AOneWayMessageCostsItsOwnFigureOrElseAnExchanges) {
  ScratchDir dir;
  const LinkFigures exchanges_only = read(dir, kBySize);
  EXPECT_NEAR(exchanges_only.one_way_s(0.5e-3, 4096), exchanges_only.message_s(0.5e-3, 4096), 1e-15);
  std::string with_one_way = kBySize;
  with_one_way.pop_back();  // the closing brace
  with_one_way +=
      R"(, "one_way_by_size": [)"
      R"({"bytes": 256, "latency_by_gap": [{"gap_ms": 0, "latency_us": 20}, {"gap_ms": 1, "latency_us": 40}]},)"
      R"( {"bytes": 65536, "latency_by_gap": [{"gap_ms": 0, "latency_us": 200}]}]})";
  const LinkFigures link = read(dir, with_one_way);
  EXPECT_NEAR(link.one_way_s(0.5e-3, 256), 30e-6, 1e-12);
  EXPECT_NEAR(link.one_way_s(0, 4096), 110e-6, 1e-12);      // halfway in log bytes
  EXPECT_NEAR(link.message_s(0.5e-3, 256), 600e-6, 1e-12);  // exchanges keep theirs
}

// Measured with 4 ranks (3 peers each): 256-byte messages cost 100 us between two ranks and
// 400 us with all 3 peers at once; one way, 20 us from one rank and 80 us from all three.
constexpr const char* kByPeers =
    R"({"latency_us": 100, "bandwidth_gbytes": 1, "all_peers": 3,)"
    R"( "latency_by_size": [{"bytes": 256, "latency_by_gap": [{"gap_ms": 0, "latency_us": 100}]}],)"
    R"( "one_way_by_size": [{"bytes": 256, "latency_by_gap": [{"gap_ms": 0, "latency_us": 20}]}],)"
    R"( "all_peers_by_size": [{"bytes": 256, "latency_by_gap": [{"gap_ms": 0, "latency_us": 400}]}],)"
    R"( "fan_in_by_size": [{"bytes": 256, "latency_by_gap": [{"gap_ms": 0, "latency_us": 80}]}]})";

TEST(LinkFigures, AMoveWithSeveralPeersCostsBetweenTheOneAndAllPeersFigures) {
  ScratchDir dir;
  const LinkFigures link = read(dir, kByPeers);
  EXPECT_EQ(link.all_peers, 3);
  EXPECT_NEAR(link.exchange_s(0, 256, 1), 100e-6, 1e-12);
  EXPECT_NEAR(link.exchange_s(0, 512, 2), 250e-6, 1e-12);  // halfway from 1 to 3 peers
  EXPECT_NEAR(link.exchange_s(0, 768, 3), 400e-6, 1e-12);
  EXPECT_NEAR(link.exchange_s(0, 768, 7), 400e-6, 1e-12);  // no more than measured
  EXPECT_NEAR(link.gather_s(0, 256, 1), 20e-6, 1e-12);
  EXPECT_NEAR(link.gather_s(0, 512, 2), 50e-6, 1e-12);
  EXPECT_NEAR(link.gather_s(0, 768, 3), 80e-6, 1e-12);
  // Measured with two ranks (no such lists), every peer count costs the pair's figure.
  const LinkFigures pair = read(dir, kBySize);
  EXPECT_NEAR(pair.exchange_s(0, 256, 3), pair.message_s(0, 256), 1e-15);
  EXPECT_NEAR(pair.gather_s(0, 256, 3), pair.one_way_s(0, 256), 1e-15);
}

TEST(LinkFigures, BadPeerListsAreNamed) {
  ScratchDir dir;
  const std::string list = R"([{"bytes": 256, "latency_by_gap": [{"gap_ms": 0, "latency_us": 1}]}])";
  const std::string head = R"({"latency_us": 5, "bandwidth_gbytes": 1, )";
  const struct {
    std::string members, message;
  } cases[] = {
      {R"("all_peers": 3, "all_peers_by_size": )" + list, "come together"},
      {R"("all_peers_by_size": )" + list + R"(, "fan_in_by_size": )" + list, "come together"},
      {R"("all_peers": 1, "all_peers_by_size": )" + list + R"(, "fan_in_by_size": )" + list, "all_peers 1"},
      {R"("all_peers": 2.5, "all_peers_by_size": )" + list + R"(, "fan_in_by_size": )" + list, "whole count"},
      {R"("all_peers": 3, "all_peers_by_size": [], "fan_in_by_size": )" + list, "all_peers_by_size: expected a list"},
  };
  for (const auto& c : cases) {
    try {
      read(dir, head + c.members + "}");
      ADD_FAILURE() << "accepted " << c.members;
    } catch (const UsageError& e) {
      EXPECT_THAT(e.what(), HasSubstr(c.message)) << c.members;
      EXPECT_THAT(e.what(), HasSubstr("link.json")) << c.members;
    }
  }
}

}  // namespace
}  // namespace layerplan
