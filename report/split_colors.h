#pragma once
// The colour of a split: each dimension has a hue (n blue, c orange, h green, w purple),
// and a layer's colour mixes them weighted by log2 of its degrees; a layer on one device
// is grey. The graph, the grid and the legend use the same colours.
#include <string>

#include "model/geometry.h"
#include "report/xml_writer.h"

namespace layerplan::report {

std::string split_color(const Degrees& degrees);  // "#rrggbb"

// The legend: one swatch per dimension, one for a single device, and a mixed example.
void write_split_legend(XmlWriter& xml);

}  // namespace layerplan::report
