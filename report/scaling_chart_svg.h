#pragma once
// The scaling chart: images/s (linear) against GPUs (log2), a line per strategy, the job's
// own count marked. Points are <circle class="point"> with data-strategy, data-gpus and
// data-images-per-s, series after series, the layer-wise search's drawn last (on top).
#include "report/scaling.h"
#include "report/xml_writer.h"

namespace layerplan::report {

void write_scaling_chart(XmlWriter& xml, const ScalingCurve& curve);

}  // namespace layerplan::report
