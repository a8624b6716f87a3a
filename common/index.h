#pragma once
// Index and size arithmetic in 64 bits. The operands are widened before they multiply, so
// a table of more than 2^31 entries is indexed right: an int product would overflow first.
// Products of sizes that come from input (dimensions, degrees, counts) are checked: they
// say when the true product does not fit rather than wrap.
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>

namespace layerplan {

// Entry (row, col) of a row-major table with `width` columns.
constexpr size_t flat_index(int row, int width, int col) {
  return static_cast<size_t>(row) * static_cast<size_t>(width) + static_cast<size_t>(col);
}

// The number of entries of a `rows` x `cols` table.
constexpr size_t table_size(int rows, int cols) { return static_cast<size_t>(rows) * static_cast<size_t>(cols); }

// a * b, or nullopt when the product does not fit in int64_t.
constexpr std::optional<int64_t> checked_mul(int64_t a, int64_t b) {
  int64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product)) return std::nullopt;
  return product;
}

// a + b, or nullopt when the sum does not fit in int64_t.
constexpr std::optional<int64_t> checked_add(int64_t a, int64_t b) {
  int64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) return std::nullopt;
  return sum;
}

// The product of `factors` (1 for none), or nullopt when it, or a partial product, does
// not fit in int64_t.
constexpr std::optional<int64_t> checked_product(std::initializer_list<int64_t> factors) {
  int64_t product = 1;
  for (const int64_t f : factors) {
    const std::optional<int64_t> next = checked_mul(product, f);
    if (!next) return std::nullopt;
    product = *next;
  }
  return product;
}

// The product of `factors` when it lies in [0, limit], else nullopt (negative factors
// included): the check of a size read from input against its limit.
constexpr std::optional<int64_t> product_within(std::initializer_list<int64_t> factors, int64_t limit) {
  const std::optional<int64_t> product = checked_product(factors);
  if (!product || *product < 0 || *product > limit) return std::nullopt;
  return product;
}

}  // namespace layerplan
