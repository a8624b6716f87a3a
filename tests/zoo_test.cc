// The built-in models reproduce torchvision's architectures: their parameter counts are
// torchvision's exactly, their forward MACs match the published figures, and every
// graph is a well-formed training DAG ending in one loss layer.
#include "model/zoo.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/error.h"
#include "model/layer_math.h"
#include "model/model_graph.h"

namespace layerplan {
namespace {

struct ZooCase {
  std::string name;
  int64_t parameters;     // torchvision's sum of p.numel() over model.parameters()
  double published_macs;  // batch 1, torchvision's "GFLOPS" column (multiply-adds)
  Shape input;            // at batch 1
};

// Test names and failure messages show the model's name, not the struct's bytes.
void PrintTo(const ZooCase& c, std::ostream* os) { *os << c.name; }

// LeNet-5 MACs by hand (batch 1):
//   conv1  6x28x28 outputs x (1x5x5)   = 117,600
//   conv2 16x10x10 outputs x (6x5x5)   = 240,000
//   fc1   120 x 400                    =  48,000
//   fc2    84 x 120                    =  10,080
//   fc3    10 x 84                     =     840
//   total                              = 416,520  (about 0.42 MMAC)
const std::vector<ZooCase>& zoo_cases() {
  static const std::vector<ZooCase> cases = {
      {"lenet5", 61'706, 416'520, Shape{{1, 1, 32, 32}}},
      {"alexnet", 61'100'840, 0.714e9, Shape{{1, 3, 224, 224}}},
      {"vgg16", 138'357'544, 15.47e9, Shape{{1, 3, 224, 224}}},
      {"resnet50", 25'557'032, 4.09e9, Shape{{1, 3, 224, 224}}},
      {"resnet101", 44'549'160, 7.80e9, Shape{{1, 3, 224, 224}}},
      {"inception_v3", 23'834'568, 5.71e9, Shape{{1, 3, 299, 299}}},
  };
  return cases;
}

const Layer& find_layer(const ModelGraph& graph, const std::string& name) {
  for (const Layer& l : graph.layers()) {
    if (l.name == name) return l;
  }
  throw std::out_of_range(graph.name() + " has no layer named " + name);
}

int count_kind(const ModelGraph& graph, LayerKind kind) {
  int n = 0;
  for (const Layer& l : graph.layers()) n += l.kind == kind ? 1 : 0;
  return n;
}

double total_forward_flops(const ModelGraph& graph) {
  double total = 0;
  for (const Layer& l : graph.layers()) total += forward_flops(graph, l);
  return total;
}

double total_backward_flops(const ModelGraph& graph) {
  double total = 0;
  for (const Layer& l : graph.layers()) total += backward_flops(graph, l);
  return total;
}

// The message of the UsageError that `f` throws; fails the test if it throws none.
std::string usage_error_message(const std::function<void()>& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a UsageError";
  return "";
}

Shape image(int64_t c, int64_t h, int64_t w) { return Shape{{1, c, h, w}}; }

// ---- Properties every zoo model has -------------------------------------------------

class ZooModelTest : public testing::TestWithParam<ZooCase> {};

INSTANTIATE_TEST_SUITE_P(AllModels, ZooModelTest, testing::ValuesIn(zoo_cases()),
                         [](const testing::TestParamInfo<ZooCase>& model) { return model.param.name; });

TEST_P(ZooModelTest, HasExactlyTorchvisionsParameterCount) {
  const ModelGraph graph = build_zoo_model(GetParam().name, 1);
  EXPECT_EQ(parameter_count(graph), GetParam().parameters);
}

TEST_P(ZooModelTest, ForwardMacsAreWithinTwoPercentOfThePublishedFigure) {
  const ModelGraph graph = build_zoo_model(GetParam().name, 1);
  const double published = GetParam().published_macs;
  EXPECT_NEAR(static_cast<double>(forward_macs(graph)), published, 0.02 * published);
}

TEST_P(ZooModelTest, IsNamedAfterTheModel) {
  const ModelGraph graph = build_zoo_model(GetParam().name, 2);
  EXPECT_EQ(graph.name(), GetParam().name);
  EXPECT_GT(graph.size(), 1);
}

TEST_P(ZooModelTest, StartsWithOneInputLayerOfTheBatchAndImageShape) {
  const ModelGraph graph = build_zoo_model(GetParam().name, 8);
  ASSERT_GT(graph.size(), 0);
  const Layer& first = graph.layer(0);
  EXPECT_EQ(first.kind, LayerKind::kInput);
  EXPECT_EQ(first.name, "input");
  Shape expected = GetParam().input;
  expected.extent[0] = 8;
  EXPECT_EQ(first.output, expected);
  EXPECT_EQ(count_kind(graph, LayerKind::kInput), 1);
}

TEST_P(ZooModelTest, IsADagInTopologicalOrderWithOneLossSink) {
  const ModelGraph graph = build_zoo_model(GetParam().name, 1);
  std::vector<int> sinks;
  for (int id = 0; id < graph.size(); ++id) {
    const Layer& l = graph.layer(id);
    EXPECT_EQ(l.id, id);
    EXPECT_EQ(l.inputs.empty(), l.kind == LayerKind::kInput) << l.name;
    for (int in : l.inputs) EXPECT_LT(in, id) << l.name << " reads a later layer";
    if (graph.consumers(id).empty()) sinks.push_back(id);
  }
  ASSERT_EQ(sinks.size(), 1u);
  const Layer& sink = graph.layer(sinks[0]);
  EXPECT_EQ(sink.kind, LayerKind::kSoftmaxCrossEntropy);
  EXPECT_EQ(sink.id, graph.size() - 1);
  EXPECT_EQ(count_kind(graph, LayerKind::kSoftmaxCrossEntropy), 1);
}

TEST_P(ZooModelTest, GivesEveryLayerAUniqueNonEmptyName) {
  const ModelGraph graph = build_zoo_model(GetParam().name, 1);
  std::set<std::string> names;
  for (const Layer& l : graph.layers()) {
    EXPECT_FALSE(l.name.empty()) << "layer " << l.id;
    EXPECT_TRUE(names.insert(l.name).second) << "duplicate name " << l.name;
  }
}

TEST_P(ZooModelTest, FeedsFullyConnectedLayersOnlyFlatTensors) {
  const ModelGraph graph = build_zoo_model(GetParam().name, 1);
  bool seen_flatten = false;
  for (const Layer& l : graph.layers()) {
    seen_flatten = seen_flatten || l.kind == LayerKind::kFlatten;
    if (l.kind != LayerKind::kFullyConnected) continue;
    EXPECT_TRUE(seen_flatten) << l.name << " precedes every flatten";
    const Shape& in = graph.input_shape(l, 0);
    EXPECT_EQ(in.h(), 1) << l.name;
    EXPECT_EQ(in.w(), 1) << l.name;
  }
}

TEST_P(ZooModelTest, WorkScalesLinearlyWithTheBatchAndParametersDoNot) {
  const ModelGraph one = build_zoo_model(GetParam().name, 1);
  const ModelGraph many = build_zoo_model(GetParam().name, 6);
  ASSERT_EQ(one.size(), many.size());
  EXPECT_EQ(forward_macs(many), 6 * forward_macs(one));
  EXPECT_DOUBLE_EQ(total_forward_flops(many), 6 * total_forward_flops(one));
  EXPECT_DOUBLE_EQ(total_backward_flops(many), 6 * total_backward_flops(one));
  EXPECT_EQ(parameter_count(many), parameter_count(one));
}

TEST_P(ZooModelTest, RejectsABatchOfZeroNamingTheValue) {
  const std::string message = usage_error_message([] { build_zoo_model(GetParam().name, 0); });
  EXPECT_NE(message.find('0'), std::string::npos) << message;
  EXPECT_NE(message.find("batch"), std::string::npos) << message;
}

TEST_P(ZooModelTest, EndsInAThousandOrTenClassLogits) {
  const ModelGraph graph = build_zoo_model(GetParam().name, 3);
  const Layer& loss = graph.layer(graph.size() - 1);
  const int64_t classes = GetParam().name == "lenet5" ? 10 : 1000;
  EXPECT_EQ(loss.output, (Shape{{3, classes, 1, 1}}));
  EXPECT_EQ(graph.input_shape(loss, 0), loss.output);
}

// ---- The registry ---------------------------------------------------------------------

TEST(ZooModelNames, ListsTheSixModelsInOrder) {
  EXPECT_EQ(zoo_model_names(),
            (std::vector<std::string>{"lenet5", "alexnet", "vgg16", "resnet50", "resnet101", "inception_v3"}));
}

TEST(BuildZooModel, BuildsTheSameGraphAsTheDirectBuilder) {
  const ModelGraph direct = resnet101(4);
  const ModelGraph named = build_zoo_model("resnet101", 4);
  ASSERT_EQ(named.size(), direct.size());
  for (int id = 0; id < direct.size(); ++id) {
    EXPECT_EQ(named.layer(id).name, direct.layer(id).name);
    EXPECT_EQ(named.layer(id).output, direct.layer(id).output);
  }
}

TEST(BuildZooModel, RejectsAnUnknownNameListingTheKnownOnes) {
  const std::string message = usage_error_message([] { build_zoo_model("foo", 1); });
  EXPECT_EQ(message,
            "unknown model 'foo': expected one of lenet5, alexnet, vgg16, resnet50, "
            "resnet101, inception_v3");
}

TEST(BuildZooModel, MatchesNamesExactly) {
  EXPECT_THROW(build_zoo_model("ResNet50", 1), UsageError);
  EXPECT_THROW(build_zoo_model("resnet", 1), UsageError);
  EXPECT_THROW(build_zoo_model("", 1), UsageError);
}

TEST(BuildZooModel, RejectsANegativeBatchNamingTheValue) {
  const std::string message = usage_error_message([] { build_zoo_model("alexnet", -3); });
  EXPECT_NE(message.find("-3"), std::string::npos) << message;
}

TEST(ZooBuilders, RejectABatchBelowOneWhenCalledDirectly) {
  EXPECT_THROW(lenet5(0), UsageError);
  EXPECT_THROW(vgg16(-1), UsageError);
  EXPECT_THROW(inception_v3(0), UsageError);
}

// ---- Architecture details -------------------------------------------------------------

TEST(LeNet5, ShrinksTo16x5x5BeforeTheClassifier) {
  const ModelGraph g = lenet5(1);
  EXPECT_EQ(find_layer(g, "conv1").output, image(6, 28, 28));
  EXPECT_EQ(find_layer(g, "pool2").output, image(16, 5, 5));
  EXPECT_EQ(find_layer(g, "flatten").output, image(400, 1, 1));
  EXPECT_EQ(forward_macs(g), 416'520);
}

TEST(AlexNet, ReachesTheAdaptivePoolSizeOf256x6x6WithoutIt) {
  const ModelGraph g = alexnet(1);
  EXPECT_EQ(find_layer(g, "conv1").output, image(64, 55, 55));
  EXPECT_EQ(find_layer(g, "pool5").output, image(256, 6, 6));
  EXPECT_EQ(count_kind(g, LayerKind::kConv2d), 5);
  EXPECT_EQ(count_kind(g, LayerKind::kFullyConnected), 3);
  EXPECT_EQ(count_kind(g, LayerKind::kDropout), 2);
}

TEST(Vgg16, HasThirteenConvolutionsAndEndsTheFeaturesAt512x7x7) {
  const ModelGraph g = vgg16(1);
  EXPECT_EQ(count_kind(g, LayerKind::kConv2d), 13);
  EXPECT_EQ(count_kind(g, LayerKind::kFullyConnected), 3);
  EXPECT_EQ(count_kind(g, LayerKind::kBatchNorm), 0);
  EXPECT_EQ(find_layer(g, "conv5_3").output, image(512, 14, 14));
  EXPECT_EQ(find_layer(g, "pool5").output, image(512, 7, 7));
  EXPECT_EQ(find_layer(g, "fc6").output, image(4096, 1, 1));
}

TEST(ResNet50, EndsTheFeaturesAt2048x7x7) {
  const ModelGraph g = resnet50(1);
  EXPECT_EQ(find_layer(g, "maxpool").output, image(64, 56, 56));
  EXPECT_EQ(find_layer(g, "layer1.2.relu3").output, image(256, 56, 56));
  EXPECT_EQ(find_layer(g, "layer2.3.relu3").output, image(512, 28, 28));
  EXPECT_EQ(find_layer(g, "layer3.5.relu3").output, image(1024, 14, 14));
  EXPECT_EQ(find_layer(g, "layer4.2.relu3").output, image(2048, 7, 7));
  EXPECT_EQ(find_layer(g, "avgpool").output, image(2048, 1, 1));
}

TEST(ResNet50, StridesTheThreeByThreeConvolutionAsInV1_5) {
  const ModelGraph g = resnet50(1);
  EXPECT_EQ(find_layer(g, "layer2.0.conv1").output, image(128, 56, 56));
  EXPECT_EQ(find_layer(g, "layer2.0.conv2").window.stride_h, 2);
  EXPECT_EQ(find_layer(g, "layer2.0.conv2").output, image(128, 28, 28));
  EXPECT_EQ(find_layer(g, "layer2.0.downsample.conv").output, image(512, 28, 28));
}

TEST(ResNet50, HasSixteenResidualBlocksAndFourProjectionShortcuts) {
  const ModelGraph g = resnet50(1);
  EXPECT_EQ(count_kind(g, LayerKind::kAdd), 16);
  EXPECT_EQ(count_kind(g, LayerKind::kConv2d), 16 * 3 + 1 + 4);
  EXPECT_EQ(count_kind(g, LayerKind::kBatchNorm), count_kind(g, LayerKind::kConv2d));
  for (const Layer& l : g.layers()) {
    if (l.kind == LayerKind::kConv2d) {
      EXPECT_FALSE(l.has_bias) << l.name;
    }
  }
  // An identity shortcut adds the block's input itself.
  const Layer& add = find_layer(g, "layer1.1.add");
  EXPECT_EQ(add.inputs.at(1), find_layer(g, "layer1.0.relu3").id);
}

TEST(ResNet101, HasTwentyThreeBlocksInLayer3) {
  const ModelGraph g = resnet101(1);
  EXPECT_EQ(count_kind(g, LayerKind::kAdd), 33);
  EXPECT_EQ(find_layer(g, "layer3.22.relu3").output, image(1024, 14, 14));
  EXPECT_EQ(find_layer(g, "layer4.2.relu3").output, image(2048, 7, 7));
}

TEST(InceptionV3, ReachesTheGridSizesOfTheTorchvisionBlocks) {
  const ModelGraph g = inception_v3(1);
  EXPECT_EQ(find_layer(g, "Conv2d_1a_3x3.conv").output, image(32, 149, 149));
  EXPECT_EQ(find_layer(g, "maxpool2").output, image(192, 35, 35));
  EXPECT_EQ(find_layer(g, "Mixed_5b").output, image(256, 35, 35));
  EXPECT_EQ(find_layer(g, "Mixed_5d").output, image(288, 35, 35));
  EXPECT_EQ(find_layer(g, "Mixed_6a").output, image(768, 17, 17));
  EXPECT_EQ(find_layer(g, "Mixed_6e").output, image(768, 17, 17));
  EXPECT_EQ(find_layer(g, "Mixed_7a").output, image(1280, 8, 8));
  EXPECT_EQ(find_layer(g, "Mixed_7c").output, image(2048, 8, 8));
}

TEST(InceptionV3, UsesPaddedAsymmetricKernelsInTheSevenBySevenBranches) {
  const ModelGraph g = inception_v3(1);
  const Layer& conv = find_layer(g, "Mixed_6b.branch7x7_2.conv");
  EXPECT_EQ(conv.window.kernel_h, 1);
  EXPECT_EQ(conv.window.kernel_w, 7);
  EXPECT_EQ(conv.window.pad_h, 0);
  EXPECT_EQ(conv.window.pad_w, 3);
  EXPECT_EQ(conv.output, image(128, 17, 17));
}

TEST(InceptionV3, ConcatenatesTheSplitBranchesOfTheEBlocksDirectly) {
  const ModelGraph g = inception_v3(1);
  EXPECT_EQ(find_layer(g, "Mixed_7b").inputs.size(), 6u);
  EXPECT_EQ(find_layer(g, "Mixed_7c").inputs.size(), 6u);
  EXPECT_EQ(find_layer(g, "Mixed_5b").inputs.size(), 4u);
  EXPECT_EQ(find_layer(g, "Mixed_6a").inputs.size(), 3u);
  EXPECT_EQ(count_kind(g, LayerKind::kConcat), 11);
}

TEST(InceptionV3, HasNinetyFourBasicConvolutionsAndNoAuxiliaryClassifier) {
  const ModelGraph g = inception_v3(1);
  EXPECT_EQ(count_kind(g, LayerKind::kConv2d), 94);
  EXPECT_EQ(count_kind(g, LayerKind::kBatchNorm), 94);
  EXPECT_EQ(count_kind(g, LayerKind::kFullyConnected), 1);
  EXPECT_EQ(count_kind(g, LayerKind::kAvgPool), 9);  // one per A, C and E block
  EXPECT_EQ(count_kind(g, LayerKind::kMaxPool), 4);  // two in the stem, one per B and D
  for (const Layer& l : g.layers()) EXPECT_EQ(l.name.find("Aux"), std::string::npos) << l.name;
}

TEST(InceptionV3, UsesTheBatchNormEpsilonOfTorchvisionsBasicConv) {
  const ModelGraph g = inception_v3(1);
  for (const Layer& l : g.layers()) {
    if (l.kind == LayerKind::kBatchNorm) {
      EXPECT_EQ(l.epsilon, 1e-3) << l.name;
    }
  }
  EXPECT_EQ(find_layer(resnet50(1), "bn1").epsilon, kDefaultBatchNormEpsilon);
}

// ---- parameter_count per layer kind --------------------------------------------------

TEST(ParameterCount, CountsWeightsAndBiasesOfEachLayerKind) {
  ModelGraph g("tiny");
  const int in = g.input("input", Shape{{2, 3, 8, 8}});
  const int conv = g.conv2d("conv", in, 4, Window::square(3, 1, 1), true);
  const int conv_nb = g.conv2d("conv_nb", conv, 4, Window{1, 3, 1, 1, 0, 1}, false);
  const int bn = g.batch_norm("bn", conv_nb);
  const int relu = g.relu("relu", bn);
  const int sum = g.add("add", {relu, conv});
  const int cat = g.concat("cat", {sum, relu});
  const int maxp = g.max_pool("max_pool", cat, Window::square(2, 2));
  const int avgp = g.avg_pool("avg_pool", maxp, Window::square(3, 1, 1));
  const int drop = g.dropout("dropout", avgp);
  const int flat = g.flatten("flatten", drop);
  const int fc = g.fully_connected("fc", flat, 10);
  const int fc_nb = g.fully_connected("fc_nb", fc, 5, false);
  const int gap = g.global_avg_pool("gap", cat);
  const int loss = g.softmax_cross_entropy("loss", fc_nb);

  auto params = [&](int id) { return parameter_count(g, g.layer(id)); };
  EXPECT_EQ(params(in), 0);
  EXPECT_EQ(params(conv), 4 * 3 * 3 * 3 + 4);  // weights + bias
  EXPECT_EQ(params(conv_nb), 4 * 4 * 1 * 3);   // 1x3 kernel, no bias
  EXPECT_EQ(params(bn), 2 * 4);                // scale and shift per channel
  EXPECT_EQ(params(relu), 0);
  EXPECT_EQ(params(sum), 0);
  EXPECT_EQ(params(cat), 0);
  EXPECT_EQ(params(maxp), 0);
  EXPECT_EQ(params(avgp), 0);
  EXPECT_EQ(params(drop), 0);
  EXPECT_EQ(params(flat), 0);
  EXPECT_EQ(params(fc), 10 * (8 * 4 * 4) + 10);  // 8 channels of 4x4 flattened
  EXPECT_EQ(params(fc_nb), 5 * 10);
  EXPECT_EQ(params(gap), 0);
  EXPECT_EQ(params(loss), 0);
  EXPECT_EQ(parameter_count(g), 112 + 48 + 8 + 1290 + 50);
}

TEST(ParameterCount, TreatsAFullyConnectedLayerOnASpatialTensorAsFlattened) {
  ModelGraph g("spatial_fc");
  const int in = g.input("input", Shape{{1, 3, 4, 5}});
  const int fc = g.fully_connected("fc", in, 7);
  EXPECT_EQ(parameter_count(g, g.layer(fc)), 7 * 60 + 7);
}

}  // namespace
}  // namespace layerplan
