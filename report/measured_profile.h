#pragma once
// A rank's measured profile (`layerplan train --profile`, runtime/training/train_profile.h)
// as the report shows it next to the prediction: per layer, seconds per step.
#include <string>
#include <vector>

namespace layerplan::report {

struct MeasuredLayer {
  std::string layer;
  double compute_s = 0;
  double moves_s = 0;
  double statistics_s = 0;
};

struct MeasuredProfile {
  std::string file;
  int rank = 0;
  double steps = 0;
  std::vector<MeasuredLayer> layers;
  double weight_reductions_s = 0;
  double loss_reductions_s = 0;
};

// Reads a profile file; throws UsageError naming the file when it is not one.
MeasuredProfile read_measured_profile(const std::string& path);

}  // namespace layerplan::report
