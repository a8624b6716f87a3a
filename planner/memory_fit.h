#pragma once
// Keeping plans within GPU memory (docs/cost-model.md, "Memory per device"):
//  1. before the search, every unit configuration whose own tile cannot fit
//     (layer_memory_lower_bound() above the usable memory) gets a penalty that no plan
//     within memory can reach, so the search never chooses it while any plan avoids it;
//  2. after the search, every candidate's whole-plan peak (StrategyCost::memory) is
//     checked, and the fastest candidate that fits is the plan.
#include <cstdint>
#include <string>

#include "planner/cost_tables.h"
#include "planner/deadline.h"
#include "planner/memory_model.h"
#include "planner/planner.h"
#include "planner/search.h"

namespace layerplan {

// Added to the step time of a configuration that cannot fit: 10^12 s, far above any step
// and small enough that sums over thousands of layers stay exact to microseconds.
inline constexpr double kOverMemoryPenalty_s = 1e12;

// Penalizes the configurations of `units` that cannot fit on `device`; returns how many.
int exclude_over_memory(CostGraph& costs, const SearchUnits& units, const ModelGraph& graph, const Device& device,
                        const MemoryModelOptions& options, Deadline& deadline);

// Per unit and configuration, layer_resident_bytes() summed over the unit's layers.
std::vector<std::vector<double>> unit_resident_bytes(const SearchUnits& units, const ModelGraph& graph,
                                                     const Device& device, const MemoryModelOptions& options);

// `costs` with `seconds_per_byte` times each unit configuration's resident bytes added: the
// search then trades step time for memory (a Lagrangian relaxation of the memory limit).
CostGraph with_memory_weight(const CostGraph& costs, const std::vector<std::vector<double>>& resident_bytes,
                             double seconds_per_byte);

bool fits_memory(const StrategyCost& strategy, int64_t usable_bytes);

// The fastest of `candidates` that fits, or nullptr when none does.
const StrategyCost* fastest_fitting(const std::vector<StrategyCost>& candidates, int64_t usable_bytes);

// "vgg16 at batch 4096 fits no plan on 16 P100 (16.0 GiB per GPU, 2.0 GiB reserved): the
// smallest plan priced needs 37.2 GiB on its fullest GPU".
std::string no_plan_fits_message(const Plan& plan, const DeviceGraph& devices);

// Bytes as GiB with one decimal: "37.2 GiB".
std::string gib_text(double bytes);

}  // namespace layerplan
