#pragma once
// How the training framework stores activations: channels first (NCHW, PyTorch's and
// TensorFlow's default) or channels last (NHWC, PyTorch's channels_last, TensorFlow's layout
// optimizer under mixed precision). cuDNN's tensor-core convolutions work on NHWC; on NCHW
// tensors each one transposes its operands in and its result out (docs/cost-model.md,
// "Tensor layout"). CUDA-core (FP32) convolutions run on either layout as it is.
#include <string_view>

namespace layerplan {

enum class TensorLayout { kChannelsLast, kChannelsFirst };

// Parses "nhwc" or "nchw" (case-insensitively); throws UsageError naming the value otherwise.
TensorLayout parse_tensor_layout(std::string_view text);
std::string_view tensor_layout_name(TensorLayout layout);

}  // namespace layerplan
