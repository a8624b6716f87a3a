#include "common/version.h"

namespace layerplan {

std::string version_line() {
  return "layerplan " + std::string(layerplan_version()) + " (commit " + std::string(layerplan_commit()) + ")";
}

}  // namespace layerplan
