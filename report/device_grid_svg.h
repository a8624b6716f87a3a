#pragma once
// The device x layer grid, the picture that explains a plan: a row per layer, a column per
// device, and a cell where the device computes a tile of the layer, coloured by the layer's
// split and labelled with the tile's number when there is room. Each row is a
// <g class="row" data-layer="NAME">; each cell a <rect> whose data-d and data-t are its
// device and tile, or, where cells are too narrow to number, "d0-d1" and "t0-t1": a run of
// consecutive tiles on consecutive devices drawn as one rectangle (tests, scripts).
#include "model/model_graph.h"
#include "planner/planner.h"
#include "report/xml_writer.h"

namespace layerplan::report {

void write_device_grid(XmlWriter& xml, const ModelGraph& graph, const StrategyCost& strategy, int device_count);

}  // namespace layerplan::report
