#include "topology/tensor_layout.h"

#include <string>

#include "common/error.h"
#include "common/text.h"

namespace layerplan {

TensorLayout parse_tensor_layout(std::string_view text) {
  const std::string word = ascii_lower(text);
  if (word == "nhwc") return TensorLayout::kChannelsLast;
  if (word == "nchw") return TensorLayout::kChannelsFirst;
  throw UsageError("unknown tensor layout '" + std::string(text) +
                   "': expected nhwc (channels last) or nchw (channels first)");
}

std::string_view tensor_layout_name(TensorLayout layout) {
  return layout == TensorLayout::kChannelsFirst ? "nchw" : "nhwc";
}

}  // namespace layerplan
