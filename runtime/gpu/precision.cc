#include "runtime/gpu/precision.h"

namespace layerplan {

MathRules math_rules(Precision precision) {
  MathRules rules;
  rules.tensor_core_tf32 = precision == Precision::kTf32;
  rules.bf16_compute = precision == Precision::kBf16;
  return rules;
}

}  // namespace layerplan
