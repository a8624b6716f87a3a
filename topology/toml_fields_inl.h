#pragma once
// Template part of toml_fields.h.
#include "common/error.h"

namespace layerplan {

template <typename Read>
void at_position(const toml::node& node, const std::string& path, const std::string& qualified_key, Read&& read) {
  try {
    read();
  } catch (const UsageError& err) {
    const std::string text = err.what();
    if (text.rfind(path + ":", 0) == 0) throw;
    throw UsageError(toml_position(path, node.source()) + ": " + qualified_key + ": " + text);
  }
}

}  // namespace layerplan
