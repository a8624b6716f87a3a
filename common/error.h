#pragma once
// Errors that cross module boundaries. Bad user input (flags, model names, cluster
// files) is a UsageError: the CLI prints its message on one line and exits with 2.
#include <stdexcept>
#include <string>

namespace layerplan {

// Input that a person typed or wrote was not what was expected. The message names
// the offending value and says what was expected instead.
class UsageError : public std::runtime_error {
 public:
  explicit UsageError(const std::string& message) : std::runtime_error(message) {}
};

// Throws UsageError(message) when `condition` is false.
void require(bool condition, const std::string& message);

}  // namespace layerplan
