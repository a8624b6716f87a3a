#include "predict/slowest_device.h"

#include <algorithm>

namespace layerplan {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

LayerSeconds slowest_device_seconds(const StepSeconds& compute, const StepSeconds& forward,
                                    const std::vector<int>& devices) {
  LayerSeconds out;
  std::vector<double> step_sums;
  for (size_t id = 0; id < compute.size(); ++id) {
    std::vector<double> slowest, slowest_forward;
    const size_t steps = compute[id].empty() ? 0 : compute[id][static_cast<size_t>(devices.front())].size();
    step_sums.resize(std::max(step_sums.size(), steps), 0.0);
    for (size_t s = 0; s < steps; ++s) {
      int worst = devices.front();
      for (int d : devices) {
        if (compute[id][static_cast<size_t>(d)][s] > compute[id][static_cast<size_t>(worst)][s]) worst = d;
      }
      slowest.push_back(compute[id][static_cast<size_t>(worst)][s]);
      slowest_forward.push_back(forward[id][static_cast<size_t>(worst)][s]);
      step_sums[s] += slowest.back();
    }
    out.compute_s.push_back(median(slowest));
    out.forward_s.push_back(median(slowest_forward));
  }
  double sum_of_medians = 0;
  for (double c : out.compute_s) sum_of_medians += c;
  if (sum_of_medians <= 0) return out;
  const double scale = median(step_sums) / sum_of_medians;
  for (size_t id = 0; id < out.compute_s.size(); ++id) {
    out.compute_s[id] *= scale;
    out.forward_s[id] *= scale;
  }
  return out;
}

}  // namespace layerplan
