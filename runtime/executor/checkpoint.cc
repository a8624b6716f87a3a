#include "runtime/executor/checkpoint.h"

#include <charconv>
#include <limits>
#include <map>
#include <span>

#include "common/error.h"
#include "common/input_file.h"
#include "common/text.h"
#include "common/version.h"
#include "model/onnx_model.h"
#include "runtime/safetensors.h"

namespace layerplan {
namespace {

// torchvision's index of each layer in `features` and `classifier` (ReLU, pooling and
// dropout modules take the indices in between).
const std::map<std::string, std::string>& renamed(const std::string& model) {
  static const std::map<std::string, std::map<std::string, std::string>> tables = {
      {"alexnet",
       {{"conv1", "features.0"},
        {"conv2", "features.3"},
        {"conv3", "features.6"},
        {"conv4", "features.8"},
        {"conv5", "features.10"},
        {"fc6", "classifier.1"},
        {"fc7", "classifier.4"},
        {"fc8", "classifier.6"}}},
      {"vgg16",
       {{"conv1_1", "features.0"},
        {"conv1_2", "features.2"},
        {"conv2_1", "features.5"},
        {"conv2_2", "features.7"},
        {"conv3_1", "features.10"},
        {"conv3_2", "features.12"},
        {"conv3_3", "features.14"},
        {"conv4_1", "features.17"},
        {"conv4_2", "features.19"},
        {"conv4_3", "features.21"},
        {"conv5_1", "features.24"},
        {"conv5_2", "features.26"},
        {"conv5_3", "features.28"},
        {"fc6", "classifier.0"},
        {"fc7", "classifier.3"},
        {"fc8", "classifier.6"}}},
  };
  static const std::map<std::string, std::string> none;
  const auto it = tables.find(model);
  return it == tables.end() ? none : it->second;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The tensors of one layer's LayerParams, by suffix, with their torch shapes.
struct Part {
  std::string suffix;
  std::vector<float> LayerParams::*field;
  std::vector<int64_t> shape;
};

std::vector<Part> parts_of(const ModelGraph& graph, const Layer& layer) {
  const LayerParams p = zero_params(graph, layer);
  const int64_t out = p.channels.size();
  std::vector<int64_t> weight = {out, p.row};
  if (layer.kind == LayerKind::kConv2d) {
    const int64_t k = static_cast<int64_t>(layer.window.kernel_h) * layer.window.kernel_w;
    weight = {out, p.row / k, layer.window.kernel_h, layer.window.kernel_w};
  } else if (layer.kind == LayerKind::kBatchNorm) {
    weight = {out};
  }
  std::vector<Part> parts = {{"weight", &LayerParams::weight, weight}};
  if (!p.bias.empty()) parts.push_back({"bias", &LayerParams::bias, {out}});
  if (!p.running_mean.empty()) {
    parts.push_back({"running_mean", &LayerParams::running_mean, {out}});
    parts.push_back({"running_var", &LayerParams::running_var, {out}});
  }
  return parts;
}

const std::string kMomentum(kMomentumPrefix);
const std::string kExpAvg(kExpAvgPrefix);
const std::string kExpAvgSq(kExpAvgSqPrefix);

// The values of `tensor` in a checkpoint read from `path`, which must have the shape `part` has
// in `layer`.
const std::vector<float>& stored_values(const TrainingState& state, const std::string& path, const std::string& tensor,
                                        const Part& part, const Layer& layer) {
  const auto it = state.arrays.find(tensor);
  require(it != state.arrays.end(), "checkpoint '" + path + "' has no F32 tensor '" + tensor + "'");
  require(it->second.shape == part.shape,
          "checkpoint '" + path + "': tensor '" + tensor + "' has another shape than layer " + layer.name + " needs");
  return it->second.values;
}

// One layer's parameters and its optimizer state (empty weight and bias where there is none).
struct StoredLayer {
  LayerParams params, momentum, second_moment;
};

// One layer's parameters and, with training_state, its optimizer state: SGD's momentum
// buffers where the checkpoint has them, AdamW's exp_avg and exp_avg_sq (required after step 0).
StoredLayer stored_layer(const TrainingState& state, const std::string& path, const ModelGraph& graph,
                         const Layer& layer, bool training_state, OptimizerKind optimizer, int step) {
  StoredLayer out;
  out.params = zero_params(graph, layer);
  out.momentum = out.params;
  out.momentum.weight.clear();
  out.momentum.bias.clear();
  out.momentum.running_mean.clear();
  out.momentum.running_var.clear();
  out.second_moment = out.momentum;
  const bool adamw = optimizer == OptimizerKind::kAdamW;
  const std::string prefix = state_dict_prefix(graph.name(), layer.name);
  for (const Part& part : parts_of(graph, layer)) {
    const std::string name = prefix + "." + part.suffix;
    out.params.*part.field = stored_values(state, path, name, part, layer);
    const bool is_buffer = part.field == &LayerParams::weight || part.field == &LayerParams::bias;
    if (!training_state || !is_buffer) continue;
    if (!adamw) {
      if (state.arrays.count(kMomentum + name))
        out.momentum.*part.field = stored_values(state, path, kMomentum + name, part, layer);
      continue;
    }
    if (step == 0 && !state.arrays.count(kExpAvg + name)) continue;
    require(state.arrays.count(kExpAvg + name) && state.arrays.count(kExpAvgSq + name),
            "checkpoint '" + path + "' has no AdamW state for '" + name +
                "' (exp_avg, exp_avg_sq): expected a checkpoint saved with --optimizer adamw");
    out.momentum.*part.field = stored_values(state, path, kExpAvg + name, part, layer);
    out.second_moment.*part.field = stored_values(state, path, kExpAvgSq + name, part, layer);
  }
  return out;
}

// --resume with SGD of a checkpoint that AdamW saved, or the other way round.
void check_optimizer_of(const TrainingState& state, const std::string& path, OptimizerKind optimizer) {
  for (const auto& [name, array] : state.arrays) {
    const bool adamw_state = name.starts_with(kExpAvgPrefix) || name.starts_with(kExpAvgSqPrefix);
    const bool sgd_state = name.starts_with(kMomentumPrefix);
    require(!(optimizer == OptimizerKind::kSgd && adamw_state),
            "checkpoint '" + path + "' holds AdamW state ('" + name + "'): expected --optimizer adamw to resume it");
    require(!(optimizer == OptimizerKind::kAdamW && sgd_state),
            "checkpoint '" + path + "' holds SGD momentum ('" + name + "'): expected --optimizer sgd to resume it");
  }
}

// The metadata's step count, checked: the executor counts steps in an int.
int stored_step(const std::map<std::string, std::string>& meta, const std::string& path) {
  const auto it = meta.find("step");
  require(it != meta.end(),
          "checkpoint '" + path + "' has no step count: is it a layerplan checkpoint? (--init-from takes weights)");
  const std::string& text = it->second;
  int step = -1;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), step);
  require(!text.empty() && text[0] != '-' && error == std::errc() && end == text.data() + text.size(),
          "checkpoint '" + path + "': metadata field 'step' is '" + clipped(text) +
              "': expected a whole number of steps from 0 to " + std::to_string(std::numeric_limits<int>::max()));
  return step;
}

}  // namespace

void write_checkpoint(const std::string& path, const TrainingState& state, const std::string& what) {
  safetensors::Contents contents;
  contents.metadata = state.metadata;
  for (const auto& [name, array] : state.arrays) {
    contents.tensors[name] = safetensors::Tensor::from_floats(array.shape, array.values);
  }
  for (const auto& [name, value] : state.counters) {
    contents.tensors[name] = safetensors::Tensor::from_int64s({}, std::span<const int64_t>(&value, 1));
  }
  safetensors::write_file(path, contents, what);
}

TrainingState read_checkpoint(const std::string& path) {
  TrainingState state;
  if (is_onnx_path(path)) {  // an ONNX file's initializers: weights only, no step
    const InputFile file(path, "ONNX file '" + path + "'", kMaxOnnxFileBytes);
    for (auto& [name, tensor] : onnx_initial_weights(file, path)) {
      state.arrays[name] = FloatArray{std::move(tensor.shape), std::move(tensor.values)};
    }
    return state;
  }
  const safetensors::Reader reader(path);
  state.metadata = reader.metadata();
  for (const auto& [name, info] : reader.tensors()) {
    if (info.dtype != safetensors::DType::kF32) continue;
    state.arrays[name] = FloatArray{info.shape, reader.read(name).floats()};
  }
  return state;
}

std::string state_dict_prefix(const std::string& model, const std::string& layer) {
  const auto& table = renamed(model);
  if (const auto it = table.find(layer); it != table.end()) return it->second;
  if (model.rfind("resnet", 0) == 0) {
    if (ends_with(layer, ".downsample.conv")) return layer.substr(0, layer.size() - 4) + "0";
    if (ends_with(layer, ".downsample.bn")) return layer.substr(0, layer.size() - 2) + "1";
  }
  return layer;
}

namespace {

// One optimizer-state tensor, summed over the processes, under `prefix` + `name`; nothing
// for an empty one (before the first step, or a state the optimizer has not).
void add_optimizer_state(const std::string& prefix, const std::string& name, const std::vector<int64_t>& shape,
                         std::vector<float>& values, Communicator* comm, TrainingState* contents) {
  if (values.empty()) return;
  if (comm) comm->all_reduce_sum(values.data(), values.size());
  contents->arrays[prefix + name] = FloatArray{shape, values};
}

}  // namespace

bool is_optimizer_state_name(std::string_view name) {
  return name.starts_with(kMomentumPrefix) || name.starts_with(kExpAvgPrefix) || name.starts_with(kExpAvgSqPrefix);
}

TrainingState training_state_of(const ModelGraph& graph, const Executor& executor, Communicator* comm) {
  TrainingState contents;
  contents.metadata = {{"format", "layerplan-checkpoint"},
                       {"model", graph.name()},
                       {"step", std::to_string(executor.steps_done())},
                       {"written_by", version_line()}};
  for (const Layer& layer : graph.layers()) {
    if (!has_params(layer.kind)) continue;
    LayerParams params = executor.gathered_params(layer.id);
    LayerParams momentum = executor.gathered_momentum(layer.id);
    LayerParams second_moment = executor.gathered_second_moment(layer.id);
    const bool adamw = executor.optimizer() == OptimizerKind::kAdamW;
    const std::string prefix = state_dict_prefix(graph.name(), layer.name);
    for (const Part& part : parts_of(graph, layer)) {
      std::vector<float>& values = params.*part.field;
      if (comm) comm->all_reduce_sum(values.data(), values.size());
      contents.arrays[prefix + "." + part.suffix] = FloatArray{part.shape, values};
      // torch counts the training forwards of each batch-norm; strict loading wants the key.
      if (part.field == &LayerParams::running_mean)
        contents.counters[prefix + ".num_batches_tracked"] = executor.steps_done();
      if (part.field == &LayerParams::running_mean || part.field == &LayerParams::running_var) continue;
      const std::string name = prefix + "." + part.suffix;
      add_optimizer_state(adamw ? kExpAvg : kMomentum, name, part.shape, momentum.*part.field, comm, &contents);
      add_optimizer_state(kExpAvgSq, name, part.shape, second_moment.*part.field, comm, &contents);
    }
  }
  return contents;
}

int64_t restore_training_state(const TrainingState& state, const std::string& path, const ModelGraph& graph,
                               Executor& executor, bool training_state) {
  const auto& meta = state.metadata;
  if (const auto it = meta.find("model"); it != meta.end()) {
    require(it->second == graph.name(),
            "checkpoint '" + path + "' is of model '" + it->second + "', not '" + graph.name() + "'");
  }
  const int step = training_state ? stored_step(meta, path) : 0;
  if (training_state) check_optimizer_of(state, path, executor.optimizer());
  // Read everything first, so that a bad file changes nothing.
  std::vector<StoredLayer> loaded;
  for (const Layer& layer : graph.layers()) {
    if (has_params(layer.kind))
      loaded.push_back(stored_layer(state, path, graph, layer, training_state, executor.optimizer(), step));
  }
  size_t i = 0;
  for (const Layer& layer : graph.layers()) {
    if (!has_params(layer.kind)) continue;
    executor.load_layer(layer.id, loaded[i].params, loaded[i].momentum, loaded[i].second_moment);
    ++i;
  }
  if (training_state) executor.set_steps_done(step);
  return step;
}

}  // namespace layerplan
