#pragma once
// Small text helpers shared by the parsers of flags, environment variables and config values.
#include <string>
#include <vector>

namespace layerplan {

// "a,,b" -> {"a", "", "b"}; "" -> {""}. Entries are not trimmed; empty ones are kept so
// that callers can refuse them.
std::vector<std::string> split_commas(const std::string& text);

}  // namespace layerplan
