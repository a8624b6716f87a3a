#pragma once
// Checkpoints of training: the parameters of every layer, named as torchvision's
// state_dict names them for the zoo models (so weights exported from PyTorch load directly,
// and ours load into torchvision), plus the optimizer state (SGD's momentum buffers or
// AdamW's exp_avg and exp_avg_sq) and the step count.
// runtime/training/checkpoint_store.h puts the weights and the momentum in two files.
//
// Names: "<prefix>.weight", "<prefix>.bias", "<prefix>.running_mean",
// "<prefix>.running_var" and the I64 scalar "<prefix>.num_batches_tracked" (the steps done),
// where the prefix is state_dict_prefix(model, layer); momentum buffers are
// "momentum_buffer.<parameter name>", AdamW's moments "exp_avg.<parameter name>" and
// "exp_avg_sq.<parameter name>" (torch keeps them in the optimizer's state, not the
// state_dict; AdamW's step is the checkpoint's step). Metadata: "format" = "layerplan-checkpoint", "model", "step",
// "written_by".
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "model/model_graph.h"
#include "runtime/communicator.h"
#include "runtime/executor/executor.h"

namespace layerplan {

// The name prefixes of the optimizer state in a checkpoint: SGD's momentum buffers,
// AdamW's first and second moments.
inline constexpr std::string_view kMomentumPrefix = "momentum_buffer.";
inline constexpr std::string_view kExpAvgPrefix = "exp_avg.";
inline constexpr std::string_view kExpAvgSqPrefix = "exp_avg_sq.";
// Whether a checkpoint tensor's name is of the optimizer state (one of the prefixes above).
bool is_optimizer_state_name(std::string_view name);

// One tensor of a checkpoint: its torch shape and its values.
struct FloatArray {
  std::vector<int64_t> shape;
  std::vector<float> values;
};

// A checkpoint in memory: named float arrays and string metadata.
struct TrainingState {
  std::map<std::string, FloatArray> arrays;
  std::map<std::string, std::string> metadata;
  std::map<std::string, int64_t> counters;  // I64 scalars: batch-norm's num_batches_tracked
};

// Writes `state` to `path` as a safetensors file (runtime/safetensors.h), atomically, as
// F32 tensors and its counters as I64 scalars. Throws UsageError "WHAT 'PATH': ..." on failure.
void write_checkpoint(const std::string& path, const TrainingState& state, const std::string& what = "checkpoint");

// Reads every F32 tensor of `path` and its metadata; tensors of other dtypes (such as
// PyTorch's I64 num_batches_tracked) are left out. A path ending in .onnx is an ONNX file:
// its initializers, named "<layer>.weight" ... as model/onnx_model.h names its layers, and
// no metadata (so no step). Throws UsageError naming the file for a missing or corrupt one.
TrainingState read_checkpoint(const std::string& path);

// torchvision's module path of a zoo layer: AlexNet's conv1 is "features.0" and fc6
// "classifier.1", VGG-16's conv1_1 "features.0" and fc6 "classifier.0", ResNet's
// "layerK.B.downsample.conv"/".bn" are "...downsample.0"/".1". Every other layer of the
// zoo already has torchvision's name (ResNet's "layer1.0.conv1", Inception-v3's
// "Mixed_5b.branch1x1.conv", "fc"); LeNet-5 and model files keep their layer names.
std::string state_dict_prefix(const std::string& model, const std::string& layer);

// The whole training state. A collective: every process of `comm` (null: one process)
// calls it and gets the same contents, summed from the shards each holds first.
TrainingState training_state_of(const ModelGraph& graph, const Executor& executor, Communicator* comm);

// Loads `state`, read from the file `path`, into `executor`: the parameters of every layer, and with `training_state`
// the optimizer state (SGD's momentum buffers where the file has them; AdamW's moments, which
// a file past step 0 must have) and step count too (--resume; --init-from takes weights only).
// State of the other optimizer than the executor's is refused.
// Returns the checkpoint's step (0 without training_state). Throws UsageError naming the
// file when it is corrupt, for another model, lacks or misshapes a tensor, or when its
// metadata's "step" is not a whole number from 0 to INT_MAX (naming the field).
int64_t restore_training_state(const TrainingState& state, const std::string& path, const ModelGraph& graph,
                               Executor& executor, bool training_state);

}  // namespace layerplan
