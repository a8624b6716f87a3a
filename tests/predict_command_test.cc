// `layerplan predict`: the prediction is its terms' sum, communication follows the link
// figures given, a 1-device plan communicates nothing, and bad input is exit 2.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/cpu_shares.h"
#include "tests/cli_harness.h"
#include "tests/scratch_dir.h"

namespace layerplan {
namespace {

using namespace testing_cli;
using ::testing::HasSubstr;

// The planner's LeNet-5 plan at batch 32 for `devices` of bench/cpu_like_4_devices.toml:
// on 2 devices it splits samples (n2) and channels (c2) and keeps the last layers on one.
// LeNet-5's plan that both moves boxes and all-reduces weights, written out by hand (the
// planner's choice depends on the cost model): the features data-parallel, fc1 and relu3
// split by channels over all devices, on 4 devices fc2 and relu4 too, the rest on device 0.
fs::path lenet_plan(const ScratchDir& dir, int devices) {
  const fs::path file = dir.path() / ("lenet-" + std::to_string(devices) + ".json");
  const Outcome r =
      run({"plan", "--model", "lenet5", "--batch", "32", "--cluster",
           std::string(LAYERPLAN_SOURCE_DIR) + "/bench/cpu_like_4_devices.toml", "--gpus", std::to_string(devices),
           "--gpus-per-node", std::to_string(devices), "--json", file.string(), "--mode", "data"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  nlohmann::json plan = nlohmann::json::parse(read_text(file));
  std::vector<int> all(static_cast<size_t>(devices));
  for (int d = 0; d < devices; ++d) all[static_cast<size_t>(d)] = d;
  for (nlohmann::json& layer : plan.at("layers")) {
    const std::string name = layer.at("name").get<std::string>();
    const bool channels = name == "fc1" || name == "relu3" || (devices == 4 && (name == "fc2" || name == "relu4"));
    const bool first = name == "fc2" || name == "relu4" || name == "fc3" || name == "loss";
    if (channels) {
      layer["degrees"] = {{"n", 1}, {"c", devices}, {"h", 1}, {"w", 1}};
      layer["devices"] = all;
    } else if (first) {
      layer["degrees"] = {{"n", 1}, {"c", 1}, {"h", 1}, {"w", 1}};
      layer["devices"] = {0};
    }
  }
  plan["strategy"] = "layer-wise";
  write_text(file, plan.dump());
  return file;
}

nlohmann::json predict_with(const fs::path& plan, const std::vector<std::string>& link, const ScratchDir& dir) {
  const fs::path json = dir.path() / "prediction.json";
  std::vector<std::string> args = {"predict", "--plan", plan.string(), "--steps", "3", "--json", json.string()};
  args.insert(args.end(), link.begin(), link.end());
  const Outcome r = run(args, {"OMP_NUM_THREADS=1"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_THAT(r.out, HasSubstr("predicted step"));
  return nlohmann::json::parse(read_text(json));
}

nlohmann::json predict(const fs::path& plan, const std::string& gbytes, const std::string& latency_us,
                       const ScratchDir& dir) {
  return predict_with(plan, {"--link-gbytes", gbytes, "--link-latency-us", latency_us}, dir);
}

std::vector<std::string> with_args(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

double communication(const nlohmann::json& p) {
  return p.at("transfer_s").get<double>() + p.at("sync_s").get<double>();
}

TEST(PredictCommand, TheStepIsTheSumOfMeasuredComputeAndPricedCommunication) {
  ScratchDir dir;
  const nlohmann::json p = predict(lenet_plan(dir, 2), "1", "100", dir);
  const double terms = p.at("compute_s").get<double>() + p.at("overhead_s").get<double>() +
                       p.at("data_s").get<double>() + p.at("transfer_s").get<double>() + p.at("sync_s").get<double>();
  EXPECT_NEAR(p.at("predicted_step_s").get<double>(), terms, 1e-12);
  double compute = 0, transfer = 0;
  for (const nlohmann::json& layer : p.at("layers")) {
    compute += layer.at("compute_s").get<double>();
    transfer += layer.at("transfer_s").get<double>();
  }
  EXPECT_NEAR(compute, p.at("compute_s").get<double>(), 1e-12);
  EXPECT_NEAR(transfer, p.at("transfer_s").get<double>(), 1e-12);
  EXPECT_GT(p.at("compute_s").get<double>(), 0);
  EXPECT_GT(p.at("transfer_s").get<double>(), 0);  // n2 -> c2 moves boxes
  EXPECT_GT(p.at("sync_s").get<double>(), 0);      // replicated weights are all-reduced
  EXPECT_EQ(p.at("devices"), 2);
  EXPECT_EQ(p.at("model"), "lenet5");
}

// --overlap on (the default, as train's) and off: the JSON says which was priced, the
// step is the sum of its terms either way, and LeNet-5's weights, one bucket due after the
// whole backward, have nothing to hide.
TEST(PredictCommand, OverlapSaysWhatItPriced) {
  ScratchDir dir;
  const fs::path plan = lenet_plan(dir, 2);
  const nlohmann::json on = predict(plan, "1", "100", dir);
  const nlohmann::json off =
      predict_with(plan, {"--link-gbytes", "1", "--link-latency-us", "100", "--overlap", "off"}, dir);
  EXPECT_EQ(on.at("overlap"), true);
  EXPECT_EQ(off.at("overlap"), false);
  for (const nlohmann::json* p : {&on, &off}) {
    const double terms = p->at("compute_s").get<double>() + p->at("overhead_s").get<double>() +
                         p->at("data_s").get<double>() + p->at("transfer_s").get<double>() +
                         p->at("sync_s").get<double>();
    EXPECT_NEAR(p->at("predicted_step_s").get<double>(), terms, 1e-12);
    EXPECT_NEAR(p->at("weight_sync_hidden_s").get<double>(), 0, 1e-12);
  }
}

// --overlap on prices the rings beside the backward only where a core is spare for the
// communication thread: with OMP_NUM_THREADS=1 on a machine of 2 or more cores, and never
// with as many compute threads as cores, where the summary says why it priced them blocking.
TEST(PredictCommand, OverlapHidesRingsOnlyWithACoreToSpare) {
  ScratchDir dir;
  const fs::path plan = lenet_plan(dir, 2);
  const int cores = static_cast<int>(allowed_cpus().size());
  const fs::path json = dir.path() / "p.json";
  for (const int threads : {1, cores}) {
    const Outcome r = run({"predict", "--plan", plan.string(), "--steps", "2", "--json", json.string(), "--link-gbytes",
                           "1", "--link-latency-us", "100"},
                          {"OMP_NUM_THREADS=" + std::to_string(threads)});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    const nlohmann::json p = nlohmann::json::parse(read_text(json));
    const bool spare = cores > threads;
    EXPECT_EQ(p.at("overlap"), true);
    EXPECT_EQ(p.at("overlap_priced_beside_backward"), spare) << threads << " threads";
    EXPECT_EQ(p.at("cores"), cores);
    EXPECT_EQ(p.at("compute_threads"), threads);
    if (spare) {
      EXPECT_THAT(r.out, HasSubstr("bucket all-reduces overlapping the backward"));
    } else {
      EXPECT_THAT(r.out, HasSubstr("no core is spare for the communication thread (" + std::to_string(cores)));
    }
  }
}

TEST(PredictCommand, CommunicationFollowsTheLinkFigures) {
  ScratchDir dir;
  const fs::path plan = lenet_plan(dir, 2);
  const nlohmann::json slow = predict(plan, "1", "100", dir);
  const nlohmann::json fast = predict(plan, "10", "10", dir);
  EXPECT_LT(fast.at("transfer_s").get<double>(), slow.at("transfer_s").get<double>() / 5);
  EXPECT_LT(fast.at("sync_s").get<double>(), slow.at("sync_s").get<double>() / 5);
}

// Every message costs the link's latency once: raising it by 1 ms adds 1 ms per message
// (bytes and compute aside, which do not depend on it).
TEST(PredictCommand, EveryMessageCostsTheLatencyOnce) {
  ScratchDir dir;
  const fs::path plan = lenet_plan(dir, 2);
  const nlohmann::json low = predict(plan, "1", "100", dir);
  const nlohmann::json high = predict(plan, "1", "1100", dir);
  const double messages = low.at("messages").get<double>();
  EXPECT_GE(messages, 3);  // moves both ways, a weight bucket, the loss
  EXPECT_EQ(high.at("messages").get<double>(), messages);
  EXPECT_NEAR(communication(high) - communication(low), messages * 1e-3, 1e-9);
}

// With bench/gloo_link_bench's figures by compute gap, a message after computing costs the
// figure of its gap: messages that follow compute are dear on a link whose gap figures are
// dear, and the bucket's ring steps, back to back, are not.
TEST(PredictCommand, AMessageCostsTheFigureOfTheComputeBeforeIt) {
  ScratchDir dir;
  const fs::path plan = lenet_plan(dir, 2);
  const auto link = [&](const std::string& name, double after_compute_us) {
    const fs::path file = dir.path() / name;
    write_text(file, R"({"latency_us": 100, "bandwidth_gbytes": 1, "latency_by_gap": [)"
                     R"({"gap_ms": 0, "latency_us": 100}, {"gap_ms": 0.000001, "latency_us": )" +
                         std::to_string(after_compute_us) + "}]}");
    return predict_with(plan, {"--link", file.string()}, dir);
  };
  const nlohmann::json flat = link("flat.json", 100);
  const nlohmann::json dear = link("dear.json", 100100);
  // Every message but the ring's second step follows some compute: at least 3 of them
  // cost 100 ms more.
  EXPECT_GT(communication(dear) - communication(flat), 3 * 0.1 - 1e-6);
  EXPECT_LT(communication(dear) - communication(flat), flat.at("messages").get<double>() * 0.1);
  // A constant figure is the same as --link-latency-us.
  EXPECT_NEAR(communication(flat), communication(predict(plan, "1", "100", dir)), 1e-9);
}

// A list of {bytes, latency_by_gap} with one figure each, at gap 0: (bytes, us).
std::string by_size(const std::vector<std::pair<int, double>>& sizes) {
  std::string list;
  for (const auto& [bytes, us] : sizes) {
    list += std::string(list.empty() ? "[" : ", ") + R"({"bytes": )" + std::to_string(bytes) +
            R"(, "latency_by_gap": [{"gap_ms": 0, "latency_us": )" + std::to_string(us) + "}]}";
  }
  return list + "]";
}

// The prediction with a --link file of 1 GB/s, 100 us and `lists` (JSON members).
nlohmann::json predict_with_link(const fs::path& plan, const std::string& name, const std::string& lists,
                                 const ScratchDir& dir) {
  const fs::path file = dir.path() / name;
  write_text(file, R"({"latency_us": 100, "bandwidth_gbytes": 1, )" + lists + "}");
  return predict_with(plan, {"--link", file.string()}, dir);
}

// With figures by message size, a box move costs the figure of its size; the loss and a
// ring's steps, whose chunks overlap, keep the small-message figure.
TEST(PredictCommand, AMessageCostsTheFigureOfItsSize) {
  ScratchDir dir;
  const fs::path plan = lenet_plan(dir, 2);
  const auto link = [&](const std::string& name, double large_us) {
    return predict_with_link(plan, name, R"("latency_by_size": )" + by_size({{256, 100}, {1024, large_us}}), dir);
  };
  const nlohmann::json flat = link("flat.json", 100);
  const nlohmann::json dear = link("dear.json", 100100);
  const double messages = flat.at("messages").get<double>();
  EXPECT_GE(messages, 5);  // moves both ways, the ring's steps, the loss
  EXPECT_NEAR(communication(flat), communication(predict(plan, "1", "100", dir)), 1e-9);
  // Each layer's messages are those of its input edges and statistics: the moves into the
  // channel-split layer, one each way.
  double layer_messages = 0;
  for (const nlohmann::json& layer : flat.at("layers")) layer_messages += layer.at("messages").get<double>();
  EXPECT_GE(layer_messages, 2);
  EXPECT_LE(layer_messages, messages - 2);  // the loss and the ring's steps are no layer's
  // Every move 100 ms dearer; the loss and the ring's steps keep the small-message figure.
  EXPECT_NEAR(communication(dear) - communication(flat), layer_messages * 0.1, 1e-6);
}

// The transfer priced for `layer` in prediction `p`.
double layer_transfer(const nlohmann::json& p, const std::string& layer) {
  for (const nlohmann::json& l : p.at("layers")) {
    if (l.at("layer") == layer) return l.at("transfer_s").get<double>();
  }
  ADD_FAILURE() << "no layer " << layer;
  return 0.0;
}

// With one-way figures, a move in which no device both sends and receives costs the
// one-way figure: on LeNet-5's 2-device plan the moves into fc2 (on one device) from the
// channel-split layer before, forward and backward; fc1's moves (samples to channels) are
// exchanges. So does the loss's reduction there: the device without fc2 waits for it with
// nothing to compute, and its part is there when the other arrives.
TEST(PredictCommand, AOneWayMoveCostsTheOneWayFigure) {
  ScratchDir dir;
  const fs::path plan = lenet_plan(dir, 2);
  const auto link = [&](const std::string& name, double one_way_us) {
    return predict_with_link(
        plan, name,
        R"("latency_by_size": )" + by_size({{256, 100}}) + R"(, "one_way_by_size": )" + by_size({{256, one_way_us}}),
        dir);
  };
  const nlohmann::json flat = link("flat.json", 100);
  const nlohmann::json dear = link("dear.json", 100100);
  EXPECT_NEAR(communication(flat), communication(predict(plan, "1", "100", dir)), 1e-9);
  EXPECT_NEAR(communication(dear) - communication(flat), 3 * 0.1, 1e-6);
  EXPECT_NEAR(layer_transfer(dear, "fc2") - layer_transfer(flat, "fc2"), 2 * 0.1, 1e-6);
  EXPECT_NEAR(dear.at("loss_sync_s").get<double>() - flat.at("loss_sync_s").get<double>(), 0.1, 1e-6);
  // Under data parallelism both devices compute up to the loss: an exchange, no one-way message.
  nlohmann::json data = nlohmann::json::parse(read_text(plan));
  for (nlohmann::json& layer : data.at("layers")) {
    layer["degrees"] = {{"n", 2}, {"c", 1}, {"h", 1}, {"w", 1}};
    layer["devices"] = {0, 1};
  }
  const fs::path data_plan = dir.path() / "lenet-data-2.json";
  write_text(data_plan, data.dump());
  const auto data_link = [&](const std::string& name, double one_way_us) {
    return predict_with_link(
        data_plan, name,
        R"("latency_by_size": )" + by_size({{256, 100}}) + R"(, "one_way_by_size": )" + by_size({{256, one_way_us}}),
        dir);
  };
  EXPECT_NEAR(communication(data_link("data-dear.json", 100100)), communication(data_link("data-flat.json", 100)),
              1e-9);
  EXPECT_NEAR(layer_transfer(dear, "fc1"), layer_transfer(flat, "fc1"), 1e-9);
}

// With figures measured on 4 ranks, a move costs by its busiest device's peers. LeNet-5's
// 4-device plan splits fc2 by channels (c4) after relu3, also c4: each device gathers the
// others' channels, an exchange with all 3 peers, forward and backward; fc3, on one device,
// gathers from the 3 others forward (a fan-in) and scatters back, one message per receiver.
TEST(PredictCommand, AMoveCostsByItsPeerCount) {
  ScratchDir dir;
  const fs::path plan = lenet_plan(dir, 4);
  const auto link = [&](const std::string& name, double all_peers_us, double fan_in_us) {
    return predict_with_link(plan, name,
                             R"("latency_by_size": )" + by_size({{256, 100}}) + R"(, "one_way_by_size": )" +
                                 by_size({{256, 100}}) + R"(, "all_peers": 3, "all_peers_by_size": )" +
                                 by_size({{256, all_peers_us}}) + R"(, "fan_in_by_size": )" +
                                 by_size({{256, fan_in_us}}),
                             dir);
  };
  const nlohmann::json flat = link("flat.json", 100, 100);
  EXPECT_NEAR(communication(flat), communication(predict(plan, "1", "100", dir)), 1e-9);
  const nlohmann::json all_dear = link("all-dear.json", 100100, 100);
  EXPECT_NEAR(layer_transfer(all_dear, "fc2") - layer_transfer(flat, "fc2"), 2 * 0.1, 1e-6);
  EXPECT_NEAR(layer_transfer(all_dear, "fc3"), layer_transfer(flat, "fc3"), 1e-9);
  const nlohmann::json fan_in_dear = link("fan-in-dear.json", 100, 100100);
  EXPECT_NEAR(layer_transfer(fan_in_dear, "fc3") - layer_transfer(flat, "fc3"), 0.1, 1e-6);
  EXPECT_NEAR(layer_transfer(fan_in_dear, "fc2"), layer_transfer(flat, "fc2"), 1e-9);
}

// Under `layerplan launch`, each rank times its own tiles while the other does; rank 0
// alone reports. The core share is the launcher's to give.
TEST(PredictCommand, UnderLaunchEachRankTimesItsOwnTiles) {
  ScratchDir dir;
  const fs::path plan = lenet_plan(dir, 2), json = dir.path() / "ranks.json";
  const std::vector<std::string> args = {"launch",
                                         "--nproc",
                                         "2",
                                         "--",
                                         kBinary,
                                         "predict",
                                         "--plan",
                                         plan.string(),
                                         "--steps",
                                         "3",
                                         "--link-gbytes",
                                         "1",
                                         "--link-latency-us",
                                         "100"};
  Outcome r = run(with_args(args, {"--json", json.string()}));
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(lines_of(r.out).size(), 1u) << describe(r);
  EXPECT_THAT(r.out, HasSubstr("[rank 0] lenet5, batch 32, layer-wise plan on 2 devices: predicted step"));
  EXPECT_THAT(r.out, HasSubstr("one rank per device"));
  const nlohmann::json p = nlohmann::json::parse(read_text(json));
  EXPECT_GT(p.at("compute_s").get<double>(), 0);
  EXPECT_GT(p.at("transfer_s").get<double>(), 0);
  EXPECT_EQ(p.at("devices"), 2);

  r = run(with_args(args, {"--core-share", "0.5"}));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("--core-share 0.5")) << describe(r);
  r = run({"launch", "--nproc", "2", "--", kBinary, "predict", "--plan", lenet_plan(dir, 1).string(), "--link-gbytes",
           "1", "--link-latency-us", "100"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("this run has 2 ranks")) << describe(r);
}

TEST(PredictCommand, OneDeviceCommunicatesNothing) {
  ScratchDir dir;
  const nlohmann::json p = predict(lenet_plan(dir, 1), "1", "100", dir);
  EXPECT_EQ(p.at("transfer_s").get<double>(), 0);
  EXPECT_EQ(p.at("sync_s").get<double>(), 0);
}

TEST(PredictCommand, BadInputIsOneLineAndExitTwo) {
  ScratchDir dir;
  const std::string plan = lenet_plan(dir, 2).string();
  const auto bad_link = [&](const std::string& name, const std::string& text) {
    write_text(dir.path() / name, text);
    return (dir.path() / name).string();
  };
  const auto with = [&](std::vector<std::string> args) {
    args.insert(args.begin(), "predict");
    return args;
  };
  const struct {
    std::vector<std::string> args;
    std::string message;
  } cases[] = {
      {with({"--plan", plan, "--steps", "1", "--link-gbytes", "1", "--link-latency-us", "10"}), "--steps 1"},
      {with({"--plan", plan, "--core-share", "0", "--link-gbytes", "1", "--link-latency-us", "10"}), "--core-share 0"},
      {with({"--plan", plan, "--core-share", "1.5", "--link-gbytes", "1", "--link-latency-us", "10"}),
       "--core-share 1.5"},
      {with({"--plan", plan, "--link-gbytes", "0", "--link-latency-us", "10"}), "--link-gbytes 0"},
      {with({"--plan", plan, "--link-gbytes", "1", "--link-latency-us", "-1"}), "--link-latency-us -1"},
      {with({"--plan", plan, "--link-latency-us", "10"}), "--link-gbytes"},
      {with({"--plan", plan, "--link-gbytes", "1", "--link-latency-us", "10", "--overlap", "maybe"}), "--overlap"},
      {with({"--plan", plan, "--link", (dir.path() / "no-link.json").string()}), "no-link.json"},
      {with({"--plan", plan, "--link", bad_link("not-json.json", "{ bandwidth")}), "not JSON"},
      {with({"--plan", plan, "--link", bad_link("no-bandwidth.json", R"({"latency_us": 5})")}), "bandwidth_gbytes"},
      {with({"--plan", plan, "--link",
             bad_link(
                 "bad-gap.json",
                 R"({"latency_us": 5, "bandwidth_gbytes": 1, "latency_by_gap": [{"gap_ms": -1, "latency_us": 5}]})")}),
       "gap_ms"},
      {with({"--plan", plan, "--link", bad_link("ok.json", R"({"latency_us": 5, "bandwidth_gbytes": 1})"),
             "--link-gbytes", "1"}),
       "one or the other"},
      {with({"--plan", (dir.path() / "missing.json").string(), "--link-gbytes", "1", "--link-latency-us", "10"}),
       "missing.json"},
      {with({"--plan", plan, "--link-gbytes", "1", "--link-latency-us", "10", "--json",
             (dir.path() / "no" / "such" / "p.json").string()}),
       "p.json"},
  };
  for (const auto& c : cases) {
    const Outcome r = run(c.args);
    EXPECT_EQ(r.exit_code, 2) << describe(r);
    EXPECT_EQ(lines_of(r.err).size(), 1u) << describe(r);
    EXPECT_THAT(r.err, HasSubstr(c.message)) << describe(r);
  }
}

// A plan may leave a device idle: every layer on one device of two. Its rank times nothing,
// and nothing is sent, not even the loss (the executor reduces it among the devices the
// plan uses), in one process and under `layerplan launch`.
TEST(PredictCommand, APlanThatLeavesADeviceIdlePricesNoMessage) {
  ScratchDir dir;
  nlohmann::json plan = nlohmann::json::parse(read_text(lenet_plan(dir, 2)));
  for (const int device : {0, 1}) {
    for (nlohmann::json& layer : plan.at("layers")) {
      layer["degrees"] = {{"n", 1}, {"c", 1}, {"h", 1}, {"w", 1}};
      layer["devices"] = {device};
    }
    const fs::path file = dir.path() / ("on-" + std::to_string(device) + ".json");
    write_text(file, plan.dump());
    for (const bool launched : {false, true}) {
      const fs::path json = dir.path() / "idle.json";
      std::vector<std::string> args = {kBinary,  "predict",       "--plan", file.string(),       "--steps",
                                       "2",      "--link-gbytes", "1",      "--link-latency-us", "100",
                                       "--json", json.string()};
      if (launched)
        args.insert(args.begin(), {"launch", "--nproc", "2", "--"});
      else
        args.erase(args.begin());
      const Outcome r = run(args, {"OMP_NUM_THREADS=1"});
      ASSERT_EQ(r.exit_code, 0) << "device " << device << (launched ? ", launched: " : ": ") << describe(r);
      const nlohmann::json p = nlohmann::json::parse(read_text(json));
      EXPECT_GT(p.at("compute_s").get<double>(), 0);
      EXPECT_EQ(p.at("messages").get<double>(), 0) << "device " << device;
      EXPECT_EQ(p.at("transfer_s").get<double>(), 0);
      EXPECT_EQ(p.at("sync_s").get<double>(), 0) << "device " << device;
      EXPECT_EQ(p.at("devices"), 2);
    }
  }
}

}  // namespace
}  // namespace layerplan
