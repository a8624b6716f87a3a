#include "common/error.h"

namespace layerplan {

void require(bool condition, const std::string& message) {
  if (!condition) throw UsageError(message);
}

}  // namespace layerplan
