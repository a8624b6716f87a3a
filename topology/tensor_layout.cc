#include "topology/tensor_layout.h"

#include <algorithm>
#include <cctype>
#include <string>

#include "common/error.h"

namespace layerplan {

TensorLayout parse_tensor_layout(std::string_view text) {
  std::string word(text);
  std::transform(word.begin(), word.end(), word.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  if (word == "nhwc") return TensorLayout::kChannelsLast;
  if (word == "nchw") return TensorLayout::kChannelsFirst;
  throw UsageError("unknown tensor layout '" + std::string(text) +
                   "': expected nhwc (channels last) or nchw (channels first)");
}

std::string_view tensor_layout_name(TensorLayout layout) {
  return layout == TensorLayout::kChannelsFirst ? "nchw" : "nhwc";
}

}  // namespace layerplan
