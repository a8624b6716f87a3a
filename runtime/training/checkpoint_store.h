#pragma once
// Where checkpoints go on disk. A checkpoint is two safetensors files: the weights, named
// as torchvision's state_dict names them (with each batch-norm's num_batches_tracked), so
// that `model.load_state_dict(load_file(path), strict=True)` takes them as they are; and
// beside it the optimizer state (the SGD momentum buffers, "momentum_buffer.<name>", or
// AdamW's "exp_avg.<name>" and "exp_avg_sq.<name>") with the same step count in its metadata.
//
//   --save FILE        FILE and optimizer_state_path(FILE), replaced at each save
//   --save-dir DIR     DIR/step-00000120/{model,optimizer}.safetensors, one folder a save,
//                      put in place whole by a rename; the newest `keep` are kept
#include <cstdint>
#include <optional>
#include <string>

#include "runtime/executor/checkpoint.h"

namespace layerplan {

// "run.safetensors" -> "run.optimizer.safetensors"; another name gets ".optimizer.safetensors"
// appended.
std::string optimizer_state_path(const std::string& weights_path);

// Writes the weights of `state` to `weights_path` and its optimizer state beside it
// (optimizer_state_path), each atomically, the optimizer state first. `what` names the flag
// in errors.
void write_checkpoint_files(const std::string& weights_path, const TrainingState& state, const std::string& what);

// Reads a checkpoint's weights and, when the optimizer file is beside them, its optimizer
// state (a checkpoint of one file, as layerplan wrote before the split, holds both).
// Throws UsageError naming the files when their step counts differ.
TrainingState read_checkpoint_files(const std::string& weights_path);

struct SavedCheckpoint {
  int64_t step = 0;
  std::string folder;   // DIR/step-00000120
  std::string weights;  // DIR/step-00000120/model.safetensors
};

// Writes `state` (whose metadata holds its "step") as a new folder of `dir` (made if
// missing), in place of one of the same step, then removes all but the newest `keep`
// checkpoints (keep >= 1). Returns the new one.
SavedCheckpoint save_checkpoint_to_folder(const std::string& dir, const TrainingState& state, int keep);

// The newest whole checkpoint of `dir` (folders step-NNNNNNNN with a weights file), or
// nullopt when there is none or no `dir`.
std::optional<SavedCheckpoint> newest_checkpoint(const std::string& dir);

}  // namespace layerplan
