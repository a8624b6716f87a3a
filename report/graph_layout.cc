#include "report/graph_layout.h"

#include <algorithm>
#include <numeric>

namespace layerplan::report {

GraphLayout layout_graph(const ModelGraph& graph) {
  GraphLayout layout;
  const auto n = static_cast<size_t>(graph.size());
  layout.row.assign(n, 0);
  layout.column.assign(n, 0);
  // Layers are in topological order, so a producer's row is known before its consumers'.
  for (const Layer& l : graph.layers()) {
    for (const int input : l.inputs) {
      layout.row[static_cast<size_t>(l.id)] =
          std::max(layout.row[static_cast<size_t>(l.id)], layout.row[static_cast<size_t>(input)] + 1);
    }
    layout.rows = std::max(layout.rows, layout.row[static_cast<size_t>(l.id)] + 1);
  }
  std::vector<std::vector<int>> members(static_cast<size_t>(layout.rows));
  for (const Layer& l : graph.layers())
    members[static_cast<size_t>(layout.row[static_cast<size_t>(l.id)])].push_back(l.id);
  std::vector<double> position(n, 0);  // where a layer is drawn, in pitches (any origin)
  for (std::vector<int>& row : members) {
    std::vector<double> wanted(row.size(), 0);
    for (size_t i = 0; i < row.size(); ++i) {
      const Layer& l = graph.layer(row[i]);
      double sum = 0;
      for (const int input : l.inputs) sum += position[static_cast<size_t>(input)];
      wanted[i] = l.inputs.empty() ? 0 : sum / static_cast<double>(l.inputs.size());
    }
    std::vector<size_t> order(row.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return wanted[a] < wanted[b]; });
    // Each layer as near its producers as the row allows: left to right, at least one pitch
    // apart, then the row shifted so that it sits where its layers want on average.
    std::vector<double> placed(order.size());
    double shift = 0;
    for (size_t k = 0; k < order.size(); ++k) {
      placed[k] = k == 0 ? wanted[order[k]] : std::max(wanted[order[k]], placed[k - 1] + 1);
      shift += wanted[order[k]] - placed[k];
    }
    shift /= static_cast<double>(order.size());
    for (size_t k = 0; k < order.size(); ++k) {
      const auto id = static_cast<size_t>(row[order[k]]);
      layout.column[id] = static_cast<int>(k);
      position[id] = placed[k] + shift;
    }
    layout.row_width.push_back(static_cast<int>(row.size()));
    layout.columns = std::max(layout.columns, static_cast<int>(row.size()));
  }
  // Positions from 0 at the leftmost layer.
  double left = 0, right = 0;
  for (size_t i = 0; i < n; ++i) {
    left = std::min(left, position[i]);
    right = std::max(right, position[i]);
  }
  layout.x.resize(n);
  for (size_t i = 0; i < n; ++i) layout.x[i] = position[i] - left;
  layout.width = n > 0 ? right - left + 1 : 0;
  return layout;
}

}  // namespace layerplan::report
