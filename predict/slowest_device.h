#pragma once
// How `layerplan predict` turns the measured compute of a plan's devices into one step's
// per-layer compute: the devices wait for each other at every layer that communicates, so
// each layer takes its slowest device of that step, not that of the typical step.
#include <vector>

namespace layerplan {

// Seconds indexed [layer][device][step].
using StepSeconds = std::vector<std::vector<std::vector<double>>>;

struct LayerSeconds {
  std::vector<double> compute_s, forward_s;  // per layer
};

// Per layer, the median over the steps of its slowest device's compute (among `devices`),
// and that device's forward part, all scaled so that the layers add up to the median over
// the steps of their sum: a kernel now and then runs long (a thread preempted), so the
// typical step holds a few such kernels and the sum of each layer's typical time would
// fall short of it.
LayerSeconds slowest_device_seconds(const StepSeconds& compute, const StepSeconds& forward,
                                    const std::vector<int>& devices);

// The median of `v`; 0 when it is empty.
double median(std::vector<double> v);

}  // namespace layerplan
