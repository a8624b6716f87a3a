#pragma once
// Numbers short keys (vectors of integers) in the order they are first seen, and forgets them
// all at once in O(1): what pricing one pair of configurations needs to find the nodes whose
// traffic is the same (planner/edge_traffic.h). Keys are compared in full, never by hash alone.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace layerplan {

class KeyTable {
 public:
  // Room for up to `most_keys` keys of `most_entries` entries in all; it never allocates after.
  void reserve(size_t most_keys, size_t most_entries);
  // Forgets every key.
  void clear();
  // The number of the key [key, key + size) among those seen since clear(), numbering it
  // size() (and setting `added`) when it is new; -1 when it is new and the table is full.
  int find_or_add(const int64_t* key, size_t size, bool& added);
  int size() const { return count_; }
  int64_t bytes() const;

 private:
  struct Slot {
    int64_t stamp = -1;  // the clear() it was filled after; free when not the current one
    size_t at = 0, size = 0;
    int number = 0;
  };

 public:
  static constexpr size_t kSlotBytes = sizeof(Slot);

 private:
  std::vector<Slot> slots_;  // open addressing, a power of two over twice most_keys
  std::vector<int64_t> arena_;
  size_t most_keys_ = 0;
  int64_t stamp_ = 0;
  int count_ = 0;
};

// The same for keys of one 64-bit word.
class WordTable {
 public:
  void reserve(size_t most_keys);
  void clear() { ++stamp_, count_ = 0; }
  int find_or_add(uint64_t key, bool& added);
  int64_t bytes() const;

 private:
  struct Slot {
    int64_t stamp = -1;
    uint64_t key = 0;
    int number = 0;
  };

 public:
  static constexpr size_t kSlotBytes = sizeof(Slot);

 private:
  std::vector<Slot> slots_;
  size_t most_keys_ = 0;
  int64_t stamp_ = 0;
  int count_ = 0;
};

}  // namespace layerplan
