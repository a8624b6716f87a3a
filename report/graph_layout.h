#pragma once
// Places a model's layers for drawing, as the paper draws Inception: one row per depth
// (the longest path from the input), the layers of one depth side by side, so that the
// branches of a block stand next to each other. Within a row, layers follow the mean
// column of their producers, which keeps a branch in its column.
#include <vector>

#include "model/model_graph.h"

namespace layerplan::report {

struct GraphLayout {
  std::vector<int> row;        // per layer id
  std::vector<int> column;     // per layer id: its place in its row, from 0
  std::vector<double> x;       // per layer id: where it is drawn, in box pitches from the left
  std::vector<int> row_width;  // layers per row
  int rows = 0;
  int columns = 0;   // the widest row's layer count
  double width = 0;  // in box pitches: from the leftmost to the rightmost layer, plus one
};

GraphLayout layout_graph(const ModelGraph& graph);

}  // namespace layerplan::report
