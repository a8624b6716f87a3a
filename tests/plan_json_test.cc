// The plan file (docs/plan-format.md): plan_to_json writes a versioned "layerplan-plan"
// document with one entry per layer, configurations_from_json reads the configurations
// back exactly, and refuses (UsageError) any file that is not a valid plan for the
// model, batch and device count it is asked about.
#include "planner/plan_json.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <vector>

#include "common/error.h"
#include "common/version.h"
#include "model/zoo.h"
#include "planner/planner.h"
#include "topology/cluster_spec.h"

namespace layerplan {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

DeviceGraph paper_devices(int gpus) {
  ClusterSpec spec = ClusterSpec::paper_cluster();
  spec.nodes = gpus / spec.gpus_per_node;
  return build_device_graph(spec);
}

std::vector<Configuration> configs_of(const StrategyCost& s) {
  std::vector<Configuration> out;
  for (const LayerCost& row : s.layers) out.push_back(row.config);
  return out;
}

// AlexNet, 32 images per GPU, on the 16 GPUs of the paper cluster, planned once.
class AlexNetPlanFile : public testing::Test {
 protected:
  static constexpr int kGpus = 16;
  static constexpr int64_t kBatch = 512;

  static void SetUpTestSuite() {
    graph_ = new ModelGraph(alexnet(kBatch));
    devices_ = new DeviceGraph(paper_devices(kGpus));
    plan_ = new Plan(make_plan(*graph_, *devices_));
    text_ = new std::string(plan_to_json(*plan_, *graph_, *devices_));
  }
  static void TearDownTestSuite() {
    delete text_;
    delete plan_;
    delete devices_;
    delete graph_;
  }

  static const ModelGraph& graph() { return *graph_; }
  static const Plan& plan() { return *plan_; }
  static const std::string& text() { return *text_; }
  static json doc() { return json::parse(*text_); }

  // The index of the layer named `name` in the graph (and in the file).
  static size_t layer_index(const std::string& name) {
    for (const Layer& l : graph_->layers()) {
      if (l.name == name) return static_cast<size_t>(l.id);
    }
    ADD_FAILURE() << "no layer " << name;
    return 0;
  }

  // The message of the UsageError that reading `edited` for AlexNet at batch 512 on 16
  // GPUs throws; fails the test if it throws nothing or something else.
  static std::string rejection(const std::string& edited, const ModelGraph& g, int devices = kGpus) {
    try {
      configurations_from_json(edited, g, devices);
    } catch (const UsageError& e) {
      return e.what();
    } catch (const std::exception& e) {
      ADD_FAILURE() << "threw a non-UsageError: " << e.what();
      return "";
    }
    ADD_FAILURE() << "accepted the plan file";
    return "";
  }
  static std::string rejection(const json& edited) { return rejection(edited.dump(), *graph_); }

 private:
  static inline ModelGraph* graph_ = nullptr;
  static inline DeviceGraph* devices_ = nullptr;
  static inline Plan* plan_ = nullptr;
  static inline std::string* text_ = nullptr;
};

TEST_F(AlexNetPlanFile, HasFormatVersionModelBatchAndCluster) {
  ASSERT_FALSE(text().empty());
  EXPECT_EQ(text().back(), '\n');
  const json d = doc();
  EXPECT_EQ(d.at("format"), "layerplan-plan");
  EXPECT_EQ(d.at("version"), 1);
  EXPECT_EQ(d.at("version"), kPlanFormatVersion);
  // Which layerplan wrote it: "layerplan X.Y.Z (commit C)".
  EXPECT_EQ(d.at("written_by"), version_line());
  EXPECT_THAT(d.at("written_by").get<std::string>(),
              testing::MatchesRegex("layerplan [0-9]+\\.[0-9]+\\.[0-9]+ \\(commit .+\\)"));
  EXPECT_EQ(d.at("model"), "alexnet");
  EXPECT_EQ(d.at("batch"), kBatch);
  EXPECT_EQ(d.at("cluster").at("devices"), kGpus);
  EXPECT_EQ(d.at("cluster").at("nodes"), 4);
  EXPECT_EQ(d.at("cluster").at("gpus_per_node"), 4);
  EXPECT_EQ(d.at("strategy"), "layer-wise");
  EXPECT_DOUBLE_EQ(d.at("predicted").at("step_s").get<double>(), plan().chosen.step_s());
  ASSERT_EQ(d.at("baselines").size(), 3u);
  EXPECT_EQ(d.at("baselines")[0].at("name"), "data parallel");
  EXPECT_EQ(d.at("search").at("timed_out"), false);
}

TEST_F(AlexNetPlanFile, HasOneEntryPerLayerWithItsDegreesAndDevices) {
  const json layers = doc().at("layers");
  ASSERT_EQ(layers.size(), static_cast<size_t>(graph().size()));
  for (const Layer& l : graph().layers()) {
    const json& entry = layers.at(static_cast<size_t>(l.id));
    const Configuration& c = plan().chosen.layers[static_cast<size_t>(l.id)].config;
    EXPECT_EQ(entry.at("id"), l.id);
    EXPECT_EQ(entry.at("name"), l.name);
    EXPECT_EQ(entry.at("kind"), std::string(kind_name(l.kind)));
    EXPECT_EQ(entry.at("output_shape").get<std::vector<int64_t>>(),
              std::vector<int64_t>(l.output.extent.begin(), l.output.extent.end()));
    const json& deg = entry.at("degrees");
    ASSERT_EQ(deg.size(), 4u) << l.name;
    EXPECT_EQ(deg.at("n"), c.degrees[0]) << l.name;
    EXPECT_EQ(deg.at("c"), c.degrees[1]) << l.name;
    EXPECT_EQ(deg.at("h"), c.degrees[2]) << l.name;
    EXPECT_EQ(deg.at("w"), c.degrees[3]) << l.name;
    EXPECT_EQ(entry.at("devices").get<std::vector<int>>(), c.devices) << l.name;
    std::vector<std::string> inputs;
    for (int in : l.inputs) inputs.push_back(graph().layer(in).name);
    EXPECT_EQ(entry.at("inputs").get<std::vector<std::string>>(), inputs) << l.name;
  }
}

TEST_F(AlexNetPlanFile, RoundTripsToTheSameConfigurations) {
  EXPECT_EQ(configurations_from_json(text(), graph(), kGpus), configs_of(plan().chosen));
}

TEST(PlanFileRoundTrip, OtherModelsAndATimedOutPlanRoundTrip) {
  const DeviceGraph devices = paper_devices(4);
  for (const std::string name : {"lenet5", "vgg16", "resnet50", "inception_v3"}) {
    const ModelGraph graph = build_zoo_model(name, 128);
    const Plan plan = make_plan(graph, devices);
    EXPECT_EQ(configurations_from_json(plan_to_json(plan, graph, devices), graph, 4), configs_of(plan.chosen)) << name;
  }
  const ModelGraph graph = vgg16(128);
  PlanOptions options;
  options.time_budget_s = 1e-9;
  const Plan plan = make_plan(graph, devices, options);
  ASSERT_TRUE(plan.timed_out);
  const std::string text = plan_to_json(plan, graph, devices);
  EXPECT_EQ(json::parse(text).at("strategy"), plan.chosen.name);
  EXPECT_EQ(json::parse(text).at("search").at("timed_out"), true);
  EXPECT_EQ(configurations_from_json(text, graph, 4), configs_of(plan.chosen));
}

// 3 nodes x 4 (`sbatch -N3 --gpus-per-node=4`): the file names the job's shape, and
// configurations on 12 GPUs round-trip like any other.
TEST(PlanFileRoundTrip, TwelveGpusInThreeNodesOfFourRoundTrip) {
  const DeviceGraph devices = paper_devices(12);
  for (const std::string name : {"lenet5", "resnet50"}) {
    const ModelGraph graph = build_zoo_model(name, 384);
    const Plan plan = make_plan(graph, devices);
    const std::string text = plan_to_json(plan, graph, devices);
    const json doc = json::parse(text);
    EXPECT_EQ(doc.at("cluster").at("nodes"), 3) << name;
    EXPECT_EQ(doc.at("cluster").at("gpus_per_node"), 4) << name;
    EXPECT_EQ(doc.at("cluster").at("devices"), 12) << name;
    int twelve = 0;
    for (const json& layer : doc.at("layers")) twelve += layer.at("devices").size() == 12;
    if (name == "resnet50") {
      EXPECT_GT(twelve, 0);  // LeNet-5 is cheaper on fewer GPUs
    }
    EXPECT_EQ(configurations_from_json(text, graph, 12), configs_of(plan.chosen)) << name;
  }
}

TEST_F(AlexNetPlanFile, AcceptsAnotherValidConfigurationForALayer) {
  // The checks below reject what is wrong, not what differs from the planner's choice.
  json d = doc();
  const size_t fc8 = layer_index("fc8");
  d["layers"][fc8]["degrees"] = {{"n", 2}, {"c", 8}, {"h", 1}, {"w", 1}};
  d["layers"][fc8]["devices"] = {15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0};
  const std::vector<Configuration> configs = configurations_from_json(d.dump(), graph(), kGpus);
  Degrees expected;
  expected.d = {2, 8, 1, 1};
  EXPECT_EQ(configs.at(fc8).degrees, expected);
  EXPECT_EQ(configs.at(fc8).devices, (std::vector<int>{15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0}));
}

TEST_F(AlexNetPlanFile, RejectsAnotherVersion) {
  json d = doc();
  d["version"] = 2;
  EXPECT_THAT(rejection(d), HasSubstr("version 2"));
  d.erase("version");
  rejection(d);
}

TEST_F(AlexNetPlanFile, RejectsAnotherFormat) {
  json d = doc();
  d["format"] = "something-else";
  EXPECT_THAT(rejection(d), HasSubstr("layerplan-plan"));
  d.erase("format");
  rejection(d);
}

TEST_F(AlexNetPlanFile, RejectsAPlanForAnotherModel) {
  const ModelGraph other = vgg16(kBatch);
  const std::string message = rejection(text(), other);
  EXPECT_THAT(message, HasSubstr("alexnet"));
  EXPECT_THAT(message, HasSubstr("vgg16"));
}

TEST_F(AlexNetPlanFile, RejectsAPlanForAnotherBatch) {
  const ModelGraph other = alexnet(2 * kBatch);
  const std::string message = rejection(text(), other);
  EXPECT_THAT(message, HasSubstr("512"));
  EXPECT_THAT(message, HasSubstr("1024"));
}

TEST_F(AlexNetPlanFile, RejectsAPlanForAnotherDeviceCount) {
  EXPECT_THAT(rejection(text(), graph(), 8), HasSubstr("16"));
  EXPECT_THAT(rejection(text(), graph(), 32), HasSubstr("32"));
}

TEST_F(AlexNetPlanFile, RejectsDuplicateDevices) {
  json d = doc();
  const size_t conv1 = layer_index("conv1");
  ASSERT_EQ(d["layers"][conv1]["devices"].size(), 16u);
  d["layers"][conv1]["devices"][1] = d["layers"][conv1]["devices"][0];
  EXPECT_THAT(rejection(d), HasSubstr("conv1"));
}

TEST_F(AlexNetPlanFile, RejectsDevicesOutsideTheJobOrOfTheWrongCount) {
  json d = doc();
  const size_t conv1 = layer_index("conv1");
  d["layers"][conv1]["devices"][3] = 16;
  EXPECT_THAT(rejection(d), HasSubstr("conv1"));
  d = doc();
  d["layers"][conv1]["devices"][3] = -1;
  EXPECT_THAT(rejection(d), HasSubstr("conv1"));
  d = doc();
  d["layers"][conv1]["devices"].erase(15);
  EXPECT_THAT(rejection(d), HasSubstr("conv1"));
}

TEST_F(AlexNetPlanFile, RejectsADegreeThatDoesNotDivideTheExtent) {
  // fc8 has 1000 features: 16 channel shards would not be equal. Devices match the
  // degrees, so the divisibility is all that is wrong.
  json d = doc();
  const size_t fc8 = layer_index("fc8");
  d["layers"][fc8]["degrees"] = {{"n", 1}, {"c", 16}, {"h", 1}, {"w", 1}};
  d["layers"][fc8]["devices"] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
  const std::string message = rejection(d);
  EXPECT_THAT(message, HasSubstr("fc8"));
  EXPECT_THAT(message, HasSubstr("1000"));

  d = doc();
  const size_t conv1 = layer_index("conv1");
  d["layers"][conv1]["degrees"] = {{"n", 3}, {"c", 1}, {"h", 1}, {"w", 1}};  // 512 images
  d["layers"][conv1]["devices"] = {0, 1, 2};
  EXPECT_THAT(rejection(d), HasSubstr("conv1"));

  d = doc();
  d["layers"][conv1]["degrees"]["n"] = 0;
  EXPECT_THAT(rejection(d), HasSubstr("conv1"));
}

TEST_F(AlexNetPlanFile, RejectsASplitAlongADimensionTheKindCannotSplit) {
  json d = doc();
  const size_t loss = layer_index("loss");  // softmax splits by samples only
  d["layers"][loss]["degrees"] = {{"n", 1}, {"c", 8}, {"h", 1}, {"w", 1}};
  d["layers"][loss]["devices"] = {0, 1, 2, 3, 4, 5, 6, 7};
  EXPECT_THAT(rejection(d), HasSubstr("loss"));
}

TEST_F(AlexNetPlanFile, RejectsMissingOrRenamedLayers) {
  json d = doc();
  d["layers"].erase(d["layers"].size() - 1);
  rejection(d);
  d = doc();
  d["layers"][3]["name"] = "renamed";
  EXPECT_THAT(rejection(d), HasSubstr("renamed"));
  d = doc();
  d["layers"][3]["degrees"].erase("w");
  rejection(d);
  d = doc();
  d["layers"][3]["devices"] = "all";
  rejection(d);
}

TEST_F(AlexNetPlanFile, RejectsTextThatIsNotJson) {
  for (const std::string& bad : {std::string(""), std::string("not json"), std::string("{\"format\": "),
                                 text().substr(0, text().size() / 2), std::string("layers = 3\n")}) {
    rejection(bad, graph());
  }
}

TEST_F(AlexNetPlanFile, RejectsJsonThatIsNotAPlanObject) {
  for (const std::string bad : {"[]", "42", "null", "\"layerplan-plan\"", "{}"}) {
    rejection(bad, graph());
  }
}

}  // namespace
}  // namespace layerplan

namespace layerplan {
namespace {

TEST_F(AlexNetPlanFile, RejectsALayerOfAnotherKindOrShape) {
  const size_t conv2 = layer_index("conv2");
  json kind = doc();
  kind["layers"][conv2]["kind"] = "max_pool";
  EXPECT_THAT(rejection(kind), HasSubstr("conv2"));
  json shape = doc();
  shape["layers"][conv2]["output_shape"][1] = 191;
  EXPECT_THAT(rejection(shape), HasSubstr("conv2"));
}

}  // namespace
}  // namespace layerplan
