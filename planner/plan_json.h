#pragma once
// Writing the plan file: what `layerplan plan --json FILE` writes and the runtime executes.
// Versioned; docs/plan-format.md is its specification, model/plan_file.h its reader.
#include <cstdint>
#include <optional>
#include <string>

#include "model/plan_file.h"
#include "planner/planner.h"

namespace layerplan {

// A file besides the model that the plan was priced with (the admin config), as the plan
// file records it: its absolute path, size and SHA-256.
struct RecordedInput {
  std::string path;
  int64_t size = 0;
  std::string sha256;
};

// The plan as a JSON document (pretty-printed, ending in a newline). `admin_config`: the
// admin config the devices were priced with; none (null) for the built-in defaults and for
// clusters described by numbers.
std::string plan_to_json(const Plan& plan, const ModelGraph& graph, const DeviceGraph& devices,
                         const std::optional<RecordedInput>& admin_config = std::nullopt);

}  // namespace layerplan
