#pragma once
// The model as a layer graph (report/graph_layout.h): a box per layer, coloured by its
// split (report/split_colors.h) and labelled with its name, degrees and devices; its
// tooltip gives the predicted times. Each box is a <g class="layer"> whose data-*
// attributes hold the layer's name and configuration, for tests and scripts.
#include "model/model_graph.h"
#include "planner/planner.h"
#include "report/xml_writer.h"

namespace layerplan::report {

void write_layer_graph(XmlWriter& xml, const ModelGraph& graph, const StrategyCost& strategy);

}  // namespace layerplan::report
