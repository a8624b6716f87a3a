#include "runtime/executor/checkpoint_file.h"

#include "runtime/safetensors.h"

namespace layerplan {

void write_checkpoint(const std::string& path, const TrainingState& state) {
  SafetensorsContents contents;
  contents.metadata = state.metadata;
  for (const auto& [name, array] : state.arrays) {
    contents.tensors[name] = Tensor::from_floats(array.shape, array.values);
  }
  write_safetensors(path, contents);
}

TrainingState read_checkpoint(const std::string& path) {
  const SafetensorsReader reader(path);
  TrainingState state;
  state.metadata = reader.metadata();
  for (const auto& [name, info] : reader.tensors()) {
    if (info.dtype != DType::kF32) continue;
    state.arrays[name] = FloatArray{info.shape, reader.read(name).floats()};
  }
  return state;
}

}  // namespace layerplan
