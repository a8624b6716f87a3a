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

// Where a profile's times were measured: the key's device and precision, and the entries'
// repeats and measured_on (model/profile_db.h).
struct ProfileOrigin {
  std::string device;     // "cpu:..." here; the GPU's name as CUDA and NVML give it on a GPU
  std::string precision;  // "fp32" on CPUs; the run's --precision on a GPU
  int64_t repeats = 0;    // timed steps, the warm-up left out
  std::string measured_on;
};

// One entry per layer that runs kernels (not the input, not flatten), keyed by its slowest
// tile under `plan`: forward_s the slowest device's forward seconds, backward_s the rest
// of its compute (the backward pass and the SGD update), medians over the timed steps.
// Any backend's timings: the CPU's below, a GPU check's (docs/cost-model.md, "Measured
// profiles").
ProfileDb profile_of_steps(const ModelGraph& graph, const std::vector<Configuration>& plan,
                           const MeasuredSteps& measured, const ProfileOrigin& origin);

// profile_of_steps() for what measure_compute() timed on this CPU with `options`.
ProfileDb measured_profile(const ModelGraph& graph, const std::vector<Configuration>& plan,
                           const MeasuredSteps& measured, const MeasureOptions& options);

}  // namespace layerplan
