#pragma once
// Index arithmetic in size_t. The operands are widened before they multiply, so a table of
// more than 2^31 entries is indexed right: an int product would overflow first.
#include <cstddef>

namespace layerplan {

// Entry (row, col) of a row-major table with `width` columns.
constexpr size_t flat_index(int row, int width, int col) {
  return static_cast<size_t>(row) * static_cast<size_t>(width) + static_cast<size_t>(col);
}

// The number of entries of a `rows` x `cols` table.
constexpr size_t table_size(int rows, int cols) { return static_cast<size_t>(rows) * static_cast<size_t>(cols); }

}  // namespace layerplan
