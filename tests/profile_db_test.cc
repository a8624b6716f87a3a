// Measured profiles (model/profile_db.h): the file's round trip, every bad field named with
// its file and entry, and the cost model taking a layer's pass times from the profile
// exactly where it holds the layer's slowest tile, on the plan's GPU and precision only.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "common/error.h"
#include "job/device_profile.h"
#include "model/profile_db.h"
#include "model/zoo.h"
#include "planner/cost_model.h"
#include "planner/planner.h"
#include "topology/cluster_spec.h"

namespace layerplan {
namespace {

using ::testing::HasSubstr;

constexpr const char* kP100 = "Tesla P100-SXM2-16GB";  // the paper cluster's device model

const Layer& layer_named(const ModelGraph& g, const std::string& name) {
  for (const Layer& l : g.layers()) {
    if (l.name == name) return l;
  }
  throw std::logic_error("no layer " + name);
}

// An entry for `layer`'s slowest tile under `config`, as predict writes them.
ProfileEntry entry_for(const ModelGraph& g, const Layer& layer, const Configuration& config, double fwd, double bwd,
                       const std::string& device = kP100, const std::string& precision = "fp32") {
  const TileShapes shapes = slowest_tile_shapes(g, layer, config);
  ProfileEntry e;
  e.layer = layer;
  std::copy_n(shapes.begin(), kNumDims, e.output.begin());
  for (size_t at = kNumDims; at < shapes.size(); at += kNumDims) {
    std::array<int64_t, kNumDims> in{};
    std::copy_n(shapes.begin() + static_cast<std::ptrdiff_t>(at), kNumDims, in.begin());
    e.inputs.push_back(in);
  }
  e.precision = precision;
  e.device = device;
  e.forward_s = fwd;
  e.backward_s = bwd;
  e.repeats = 5;
  e.measured_on = "test";
  return e;
}

struct Fixture {
  ModelGraph g = lenet5(32);
  DeviceGraph devices = build_device_graph(ClusterSpec::paper_cluster());
  std::vector<Configuration> dp = data_parallel(g, devices.device_count());
};

TEST(ProfileDb, RoundTripsThroughItsFile) {
  Fixture f;
  ProfileDb db;
  for (const Layer& l : f.g.layers()) {
    if (l.kind == LayerKind::kInput || l.kind == LayerKind::kFlatten) continue;
    db.entries.push_back(entry_for(f.g, l, f.dp[static_cast<size_t>(l.id)], 1e-3 * l.id, 2e-3 * l.id));
  }
  const ProfileDb again = profile_db_from_json(profile_db_to_json(db), "p.json");
  ASSERT_EQ(again.entries.size(), db.entries.size());
  EXPECT_EQ(profile_db_to_json(again), profile_db_to_json(db));
  for (size_t i = 0; i < db.entries.size(); ++i) {
    EXPECT_EQ(profile_signature(again.entries[i].layer), profile_signature(db.entries[i].layer));
    EXPECT_EQ(again.entries[i].shapes(), db.entries[i].shapes());
  }
  EXPECT_EQ(again.source, "p.json");
}

TEST(ProfileDb, SignaturesTellKindsWindowsAndGroupsApart) {
  const ModelGraph g = lenet5(8);
  std::set<std::string> seen;
  for (const Layer& l : g.layers()) seen.insert(profile_signature(l));
  EXPECT_TRUE(seen.count("conv2d k5x5 s1x1 p0x0 g1")) << ::testing::PrintToString(seen);
  Layer grouped = layer_named(g, "conv1");
  grouped.groups = 2;
  EXPECT_NE(profile_signature(grouped), profile_signature(layer_named(g, "conv1")));
}

TEST(ProfileDb, ThePricedComputeIsTheProfilesWhereItHoldsTheTile) {
  Fixture f;
  const Layer& conv = layer_named(f.g, "conv2");
  const Layer& fc = layer_named(f.g, "fc1");
  const Configuration& conv_dp = f.dp[static_cast<size_t>(conv.id)];
  ProfileDb db;
  db.entries.push_back(entry_for(f.g, conv, conv_dp, 0.125, 0.25));
  db.entries.push_back(entry_for(f.g, fc, f.dp[static_cast<size_t>(fc.id)], 0.5, 0.75, "NVIDIA H100 80GB HBM3"));
  db.entries.push_back(entry_for(f.g, fc, f.dp[static_cast<size_t>(fc.id)], 0.5, 0.75, kP100, "bf16"));
  const auto profile = std::make_shared<const DeviceProfile>(db.for_device("tesla p100-sxm2-16gb", "fp32"));
  EXPECT_EQ(profile->size(), 1);
  const CostModel plain(f.g, f.devices);
  const CostModel measured(f.g, f.devices, SyncOptions{}, profile);

  const PassTimes t = measured.pass_times(conv, conv_dp);
  EXPECT_EQ(t.forward_s, 0.125);
  EXPECT_EQ(t.backward_s, 0.25);
  // Another tile of the same layer, and every other layer (fc1's entries are for another
  // GPU and another precision), keep the compute model's times.
  Configuration one_device{Degrees{}, {0}};
  EXPECT_EQ(measured.compute_time(conv, one_device), plain.compute_time(conv, one_device));
  for (const Layer& l : f.g.layers()) {
    if (l.id == conv.id) continue;
    const Configuration& c = f.dp[static_cast<size_t>(l.id)];
    EXPECT_EQ(measured.compute_time(l, c), plain.compute_time(l, c)) << l.name;
  }

  // The strategy's per-layer compute, as the plan file records it.
  const StrategyCost priced = price_strategy(measured, "dp", f.dp);
  EXPECT_EQ(priced.layers[static_cast<size_t>(conv.id)].compute_s, 0.375);
  EXPECT_EQ(priced.layers[static_cast<size_t>(conv.id)].forward_compute_s, 0.125);
  EXPECT_EQ(profiled_layers(f.g, priced, *profile), 1);
}

TEST(ProfileDb, MakePlanPricesWithTheProfileOfItsOptions) {
  Fixture f;
  const Layer& conv = layer_named(f.g, "conv1");
  ProfileDb db;
  // Data parallelism's conv1 made very slow: the planner must price it so.
  db.entries.push_back(entry_for(f.g, conv, f.dp[static_cast<size_t>(conv.id)], 2.0, 3.0));
  PlanOptions options;
  options.profile = std::make_shared<const DeviceProfile>(db.for_device(kP100, "fp32"));
  const Plan plan = make_plan(f.g, f.devices, options);
  const StrategyCost& dp = plan.baselines.front();
  ASSERT_EQ(dp.name, "data parallel");
  EXPECT_EQ(dp.layers[static_cast<size_t>(conv.id)].compute_s, 5.0);
  // The search avoids the slow configuration.
  EXPECT_LT(plan.chosen.step_s(), 5.0);
}

// Each bad field: UsageError naming the file, the entry and the field.
TEST(ProfileDb, EveryBadFieldIsNamed) {
  const std::string good =
      R"({"kind": "conv2d", "window": {"kernel": [3, 3], "stride": [1, 1], "padding": [1, 1]}, "groups": 1,)"
      R"( "inputs": [[8, 3, 32, 32]], "output": [8, 16, 32, 32], "precision": "fp32", "device": "x",)"
      R"( "forward_s": 0.001, "backward_s": 0.002, "repeats": 3, "measured_on": "here"})";
  const auto doc = [](const std::string& entry) {
    return R"({"format": "layerplan-profile-db", "version": 1, "entries": [)" + entry + "]}";
  };
  EXPECT_EQ(profile_db_from_json(doc(good), "p.json").entries.size(), 1u);
  const auto replaced = [&](const std::string& from, const std::string& to) {
    std::string e = good;
    e.replace(e.find(from), from.size(), to);
    return e;
  };
  struct Case {
    std::string entry, expected;
  };
  const std::vector<Case> cases = {
      {replaced(R"("forward_s": 0.001)", R"("forward_s": -1)"), "entries[0]: forward_s -1: expected seconds"},
      {replaced(R"("backward_s": 0.002)", R"("backward_s": "x")"), "entries[0]: backward_s \"x\": expected a number"},
      {replaced(R"("repeats": 3)", R"("repeats": 0)"), "entries[0]: repeats 0: expected an integer from 1"},
      {replaced(R"("device": "x", )", ""), "entries[0]: missing device"},
      {replaced(R"("precision": "fp32")", R"("precision": "")"), "entries[0]: precision \"\": expected a name"},
      {replaced(R"("kind": "conv2d")", R"("kind": "conv3d")"), "entries[0]: kind \"conv3d\": expected a layer kind"},
      {replaced(R"("groups": 1)", R"("groups": 0)"), "entries[0]: groups 0: expected an integer from 1"},
      {replaced(R"("output": [8, 16, 32, 32])", R"("output": [8, 16, 32])"),
       "entries[0]: output an array of 3 entries: expected [n, c, h, w]"},
      {replaced(R"("inputs": [[8, 3, 32, 32]])", R"("inputs": [])"), "entries[0]: inputs an array of 0 entries"},
      {replaced(R"("inputs": [[8, 3, 32, 32]])", R"("inputs": [[8, 3, 0, 32]])"),
       "entries[0]: inputs[0][2] 0: expected an integer from 1"},
      {replaced(R"("kernel": [3, 3])", R"("kernel": 3)"), "entries[0]: window.kernel 3: expected [height, width]"},
      {replaced(R"("stride": [1, 1])", R"("stride": [1, 1], "dilation": [1, 1])"),
       "entries[0]: window.dilation: not a field of a window"},
      {replaced(R"("measured_on": "here")", R"("measured_on": "here", "speed": 1)"),
       "entries[0]: speed: not a field of a conv2d entry"},
      {R"({"kind": "relu", "groups": 1, "inputs": [[1, 1, 1, 1]], "output": [1, 1, 1, 1], "precision": "fp32",)"
       R"( "device": "x", "forward_s": 0, "backward_s": 0, "repeats": 1, "measured_on": ""})",
       "entries[0]: groups: not a field of a relu entry"},
  };
  for (const Case& c : cases) {
    try {
      profile_db_from_json(doc(c.entry), "p.json");
      ADD_FAILURE() << "accepted: " << c.entry;
    } catch (const UsageError& e) {
      EXPECT_THAT(e.what(), HasSubstr("profile db 'p.json': " + c.expected)) << c.entry;
    }
  }
  const std::vector<std::pair<std::string, std::string>> documents = {
      {R"({"format": "layerplan-plan", "version": 1, "entries": []})", "format \"layerplan-plan\": expected"},
      {R"({"format": "layerplan-profile-db", "version": 2, "entries": []})", "version 2: expected 1"},
      {R"({"format": "layerplan-profile-db", "version": 1})", "missing entries"},
      {R"({"format": "layerplan-profile-db", "version": 1, "entries": {}})", "entries an object: expected an array"},
      {"[1", "not JSON"},
  };
  for (const auto& [text, expected] : documents) {
    try {
      profile_db_from_json(text, "p.json");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const UsageError& e) {
      EXPECT_THAT(e.what(), HasSubstr(expected)) << text;
    }
  }
}

}  // namespace
}  // namespace layerplan
