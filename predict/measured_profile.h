#pragma once
// A measured profile (model/profile_db.h) from what `layerplan predict` timed: every
// layer's kernels on its slowest device, keyed by the layer, its slowest tile's shapes,
// precision fp32 and the device "cpu:MODEL NAME (KERNELS)", so that the planner takes them
// only for a plan on the same CPU and kernels (`layerplan predict --profile-db-out`).
#include <string>
#include <vector>

#include "model/geometry.h"
#include "model/model_graph.h"
#include "model/profile_db.h"
#include "predict/measurement.h"

namespace layerplan {

// "cpu:MODEL NAME (KERNELS)": /proc/cpuinfo's model name ("unknown" where it has none) and
// the kernel backend's name.
std::string cpu_profile_device(KernelBackend kernels);

// One entry per layer that runs kernels (not the input, not flatten): forward_s the slowest
// device's forward seconds, backward_s the rest of its compute (the backward pass and the
// SGD update), the medians of options.steps - 1 timed steps.
ProfileDb measured_profile(const ModelGraph& graph, const std::vector<Configuration>& plan,
                           const MeasuredSteps& measured, const MeasureOptions& options);

}  // namespace layerplan
