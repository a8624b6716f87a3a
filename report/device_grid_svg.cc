#include "report/device_grid_svg.h"

#include <algorithm>
#include <string>
#include <vector>

#include "report/report_text.h"
#include "report/split_colors.h"

namespace layerplan::report {

namespace {

constexpr double kLabelWidth = 190, kHeader = 28, kRowHeight = 16;
// Cells at least this wide are drawn one by one and numbered; narrower runs of
// consecutive tiles on consecutive devices are one rectangle.
constexpr double kNumberedCell = 20;

double cell_width(int device_count) { return std::clamp(1100.0 / device_count, 6.0, 28.0); }

void write_header(XmlWriter& xml, int device_count, double cell) {
  // Label every device when the labels fit, else every node-sized step of 4 or more.
  const int every = std::max(1, static_cast<int>(24 / cell));
  for (int d = 0; d < device_count; d += every) {
    xml.leaf("text", {{"x", px(kLabelWidth + d * cell + cell / 2)}, {"y", px(kHeader - 8)}, {"class", "head"}},
             std::to_string(d));
  }
}

// Tiles t..t+k on devices d..d+k, drawn as one rectangle when cells are too narrow to number.
struct CellRun {
  int first_tile = 0, tiles = 1, first_device = 0;
};

std::vector<CellRun> cell_runs(const Configuration& config, bool merge) {
  std::vector<CellRun> runs;
  for (int t = 0; t < config.tiles(); ++t) {
    const int device = config.devices[static_cast<size_t>(t)];
    if (merge && !runs.empty() && runs.back().first_device + runs.back().tiles == device) {
      ++runs.back().tiles;
    } else {
      runs.push_back({t, 1, device});
    }
  }
  return runs;
}

std::string range(int first, int count) {
  return count == 1 ? std::to_string(first) : std::to_string(first) + "-" + std::to_string(first + count - 1);
}

void write_row(XmlWriter& xml, const Layer& l, const Configuration& config, double y, double cell) {
  xml.open("g", {{"class", "row"},
                 {"data-layer", l.name},
                 {"fill", split_color(config.degrees)},
                 {"transform", "translate(0," + px(y) + ")"}});
  xml.leaf("text", {{"x", px(kLabelWidth - 6)}, {"y", px(kRowHeight - 4)}, {"class", "label"}},
           clipped_label(l.name, 28));
  const bool numbered = cell >= kNumberedCell;
  for (const CellRun& run : cell_runs(config, !numbered)) {
    const double x = kLabelWidth + run.first_device * cell;
    xml.leaf("rect", {{"x", px(x + 0.5)},
                      {"y", "1"},
                      {"width", px(run.tiles * cell - 1)},
                      {"height", px(kRowHeight - 2)},
                      {"data-d", range(run.first_device, run.tiles)},
                      {"data-t", range(run.first_tile, run.tiles)}});
    if (numbered && config.tiles() > 1) {
      xml.leaf("text", {{"x", px(x + cell / 2)}, {"y", px(kRowHeight - 4)}, {"class", "tileno"}},
               std::to_string(run.first_tile));
    }
  }
  xml.close();
}

}  // namespace

void write_device_grid(XmlWriter& xml, const ModelGraph& graph, const StrategyCost& strategy, int device_count) {
  const double cell = cell_width(device_count);
  const double width = kLabelWidth + device_count * cell + 10;
  const double height = kHeader + graph.size() * kRowHeight + 6;
  xml.open("svg", {{"xmlns", "http://www.w3.org/2000/svg"},
                   {"class", "grid"},
                   {"width", px(width)},
                   {"height", px(height)},
                   {"viewBox", "0 0 " + px(width) + " " + px(height)}});
  write_header(xml, device_count, cell);
  for (const Layer& l : graph.layers()) {
    const double y = kHeader + l.id * kRowHeight;
    if (l.id % 2 == 1) {
      xml.leaf("rect",
               {{"class", "stripe"}, {"x", "0"}, {"y", px(y)}, {"width", px(width)}, {"height", px(kRowHeight)}});
    }
    write_row(xml, l, strategy.layers[static_cast<size_t>(l.id)].config, y, cell);
  }
  xml.close();
}

}  // namespace layerplan::report
