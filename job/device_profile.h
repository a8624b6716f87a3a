#pragma once
// The measured profile a plan is priced with (docs/cost-model.md, "Measured profiles"):
// `--profile-db FILE` or the admin's `[node] profile_db`, narrowed to the plan's GPU model
// and precision.
#include <memory>
#include <string>

#include "model/model_graph.h"
#include "model/profile_db.h"
#include "planner/planner.h"
#include "topology/device_graph.h"
#include "topology/gpu_catalog.h"

namespace layerplan {

// The entries of the profile file at `path` measured on `device`'s model at `precision`;
// nullptr when `path` is empty. Throws UsageError for a file that cannot be read or has a
// bad entry (model/profile_db.h).
std::shared_ptr<const DeviceProfile> load_device_profile(const std::string& path, const Device& device,
                                                         Precision precision);

// How many of `strategy`'s layers the profile prices.
int profiled_layers(const ModelGraph& graph, const StrategyCost& strategy, const DeviceProfile& profile);

// One line for the user: how many layers of the plan the profile priced, or, when it holds
// nothing for this device, which devices it holds.
std::string profile_note(const ModelGraph& graph, const StrategyCost& strategy, const DeviceProfile& profile);

}  // namespace layerplan
