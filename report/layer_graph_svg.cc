#include "report/layer_graph_svg.h"

#include <string>

#include "report/graph_layout.h"
#include "report/report_text.h"
#include "report/split_colors.h"

namespace layerplan::report {

namespace {

constexpr double kBoxWidth = 176, kBoxHeight = 36, kGapX = 20, kGapY = 22, kMargin = 10;

struct Point {
  double x, y;
};

// Top-left corner of a layer's box.
Point box_at(const GraphLayout& layout, int id) {
  const auto i = static_cast<size_t>(id);
  return {kMargin + layout.x[i] * (kBoxWidth + kGapX), kMargin + layout.row[i] * (kBoxHeight + kGapY)};
}

void write_edges(XmlWriter& xml, const ModelGraph& graph, const GraphLayout& layout) {
  std::string d;
  for (const Layer& l : graph.layers()) {
    const Point to = box_at(layout, l.id);
    for (const int input : l.inputs) {
      const Point from = box_at(layout, input);
      d += "M" + px(from.x + kBoxWidth / 2) + " " + px(from.y + kBoxHeight) + "L" + px(to.x + kBoxWidth / 2) + " " +
           px(to.y);
    }
  }
  xml.leaf("path", {{"class", "edge"}, {"d", d}});
}

void write_layer(XmlWriter& xml, const Layer& l, const LayerCost& cost, Point at) {
  const Configuration& c = cost.config;
  xml.open("g", {{"class", "layer"},
                 {"data-layer", l.name},
                 {"data-kind", std::string(kind_name(l.kind))},
                 {"data-degrees", c.degrees.str()},
                 {"data-devices", device_list(c.devices)},
                 {"data-config", c.str()}});
  xml.titled("rect",
             {{"x", px(at.x)},
              {"y", px(at.y)},
              {"width", px(kBoxWidth)},
              {"height", px(kBoxHeight)},
              {"rx", "4"},
              {"fill", split_color(c.degrees)}},
             l.name + " (" + std::string(kind_name(l.kind)) + ", output " + l.output.str() + ")\n" + c.str() +
                 "\ncompute " + milliseconds(cost.compute_s) + " ms, transfer in " + milliseconds(cost.transfer_s) +
                 " ms, sync " + milliseconds(cost.sync_s) + " ms");
  xml.leaf("text", {{"x", px(at.x + 6)}, {"y", px(at.y + 15)}, {"class", "name"}}, clipped_label(l.name, 26));
  xml.leaf("text", {{"x", px(at.x + 6)}, {"y", px(at.y + 30)}, {"class", "config"}},
           clipped_label(c.degrees.str() + " | " + gpu_ranges(c.devices), 30));
  xml.close();
}

}  // namespace

void write_layer_graph(XmlWriter& xml, const ModelGraph& graph, const StrategyCost& strategy) {
  const GraphLayout layout = layout_graph(graph);
  const double width = 2 * kMargin + layout.width * (kBoxWidth + kGapX) - kGapX;
  const double height = 2 * kMargin + layout.rows * (kBoxHeight + kGapY) - kGapY;
  xml.open("svg", {{"xmlns", "http://www.w3.org/2000/svg"},
                   {"class", "graph"},
                   {"width", px(width)},
                   {"height", px(height)},
                   {"viewBox", "0 0 " + px(width) + " " + px(height)}});
  write_edges(xml, graph, layout);
  for (const Layer& l : graph.layers())
    write_layer(xml, l, strategy.layers[static_cast<size_t>(l.id)], box_at(layout, l.id));
  xml.close();
}

}  // namespace layerplan::report
