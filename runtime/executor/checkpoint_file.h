#pragma once
// A checkpoint as named float arrays, and its safetensors file (runtime/safetensors.h).
// Kept apart from checkpoint.h because the safetensors Tensor and the kernels' Tensor
// share a name: no file includes both.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace layerplan {

struct FloatArray {
  std::vector<int64_t> shape;
  std::vector<float> values;
};

struct TrainingState {
  std::map<std::string, FloatArray> arrays;
  std::map<std::string, std::string> metadata;
};

// Writes `state` atomically (F32 tensors). Throws UsageError naming the file on failure.
void write_checkpoint(const std::string& path, const TrainingState& state);

// Reads every F32 tensor of `path` and its metadata; tensors of other dtypes (such as
// PyTorch's I64 num_batches_tracked) are left out. Throws UsageError naming the file for
// a missing or corrupt one.
TrainingState read_checkpoint(const std::string& path);

}  // namespace layerplan
