// Checkpoint names: torchvision's state_dict names for the zoo models; checkpoint files
// through the safetensors reader and writer.
#include <gtest/gtest.h>

#include <set>

#include "common/error.h"
#include "model/zoo.h"
#include "runtime/executor/checkpoint.h"
#include "runtime/safetensors.h"
#include "tests/scratch_dir.h"

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

TEST(CheckpointFile, ReadsBackWhatItWroteAndSkipsTensorsThatAreNotF32) {
  const ScratchDir dir;
  TrainingState state;
  state.metadata = {{"format", "layerplan-checkpoint"}, {"step", "3"}};
  state.arrays["conv1.weight"] = FloatArray{{2, 1, 1, 1}, {0.5f, -1.25f}};
  state.arrays["conv1.bias"] = FloatArray{{2}, {3.0f, 4.0f}};
  write_checkpoint(dir.file("a.safetensors"), state);
  const TrainingState back = read_checkpoint(dir.file("a.safetensors"));
  EXPECT_EQ(back.metadata, state.metadata);
  ASSERT_EQ(back.arrays.size(), 2u);
  EXPECT_EQ(back.arrays.at("conv1.weight").shape, (std::vector<int64_t>{2, 1, 1, 1}));
  EXPECT_EQ(back.arrays.at("conv1.weight").values, (std::vector<float>{0.5f, -1.25f}));
  EXPECT_EQ(back.arrays.at("conv1.bias").values, (std::vector<float>{3.0f, 4.0f}));

  // PyTorch's num_batches_tracked is I64: left out.
  safetensors::Contents torch;
  const std::vector<int64_t> tracked = {7};
  const std::vector<float> mean = {0.25f};
  torch.tensors["bn.num_batches_tracked"] = safetensors::Tensor::from_int64s({}, tracked);
  torch.tensors["bn.running_mean"] = safetensors::Tensor::from_floats({1}, mean);
  safetensors::write_file(dir.file("torch.safetensors"), torch);
  const TrainingState from_torch = read_checkpoint(dir.file("torch.safetensors"));
  ASSERT_EQ(from_torch.arrays.size(), 1u);
  EXPECT_EQ(from_torch.arrays.at("bn.running_mean").values, mean);
  EXPECT_THROW(read_checkpoint(dir.file("missing.safetensors")), UsageError);
}

}  // namespace
}  // namespace layerplan
