// Checkpoint names: torchvision's state_dict names for the zoo models.
#include <gtest/gtest.h>

#include <set>

#include "model/zoo.h"
#include "runtime/executor/checkpoint.h"

namespace layerplan {
namespace {

TEST(StateDictNames, AsTorchvisionNamesThem) {
  EXPECT_EQ(state_dict_prefix("alexnet", "conv1"), "features.0");
  EXPECT_EQ(state_dict_prefix("alexnet", "conv5"), "features.10");
  EXPECT_EQ(state_dict_prefix("alexnet", "fc8"), "classifier.6");
  EXPECT_EQ(state_dict_prefix("vgg16", "conv1_2"), "features.2");
  EXPECT_EQ(state_dict_prefix("vgg16", "conv5_3"), "features.28");
  EXPECT_EQ(state_dict_prefix("vgg16", "fc6"), "classifier.0");
  EXPECT_EQ(state_dict_prefix("resnet50", "layer1.0.conv1"), "layer1.0.conv1");
  EXPECT_EQ(state_dict_prefix("resnet50", "layer2.0.downsample.conv"), "layer2.0.downsample.0");
  EXPECT_EQ(state_dict_prefix("resnet101", "layer3.0.downsample.bn"), "layer3.0.downsample.1");
  EXPECT_EQ(state_dict_prefix("inception_v3", "Mixed_5b.branch1x1.conv"), "Mixed_5b.branch1x1.conv");
  EXPECT_EQ(state_dict_prefix("lenet5", "conv1"), "conv1");
}

TEST(StateDictNames, EveryZooLayerWithParametersHasItsOwnName) {
  for (const std::string& model : zoo_model_names()) {
    const ModelGraph g = build_zoo_model(model, 1);
    std::set<std::string> names;
    int with_params = 0;
    for (const Layer& layer : g.layers()) {
      if (!has_params(layer.kind)) continue;
      ++with_params;
      names.insert(state_dict_prefix(model, layer.name));
    }
    EXPECT_EQ(static_cast<int>(names.size()), with_params) << model;
  }
}

}  // namespace
}  // namespace layerplan
