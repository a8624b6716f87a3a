#include "planner/key_table.h"

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>

namespace layerplan {

namespace {

uint64_t hash_key(const int64_t* key, size_t size) {
  uint64_t h = size;
  for (size_t i = 0; i < size; ++i) {
    h = (h ^ static_cast<uint64_t>(key[i])) * 0x9e3779b97f4a7c15ULL;
    h ^= h >> 29;
  }
  return h;
}

// Keys are a few entries long: a plain loop beats a call to memcmp.
bool same(const int64_t* a, const int64_t* b, size_t size) {
  for (size_t i = 0; i < size; ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

}  // namespace

void KeyTable::reserve(size_t most_keys, size_t most_entries) {
  most_keys_ = most_keys;
  slots_.assign(std::bit_ceil(2 * most_keys + 1), Slot{});
  arena_.clear();
  arena_.reserve(most_entries);
  stamp_ = 0;
  count_ = 0;
}

void KeyTable::clear() {
  ++stamp_;
  arena_.clear();
  count_ = 0;
}

int KeyTable::find_or_add(const int64_t* key, size_t size, bool& added) {
  added = false;
  if (slots_.empty()) return -1;
  const size_t mask = slots_.size() - 1;
  for (size_t at = hash_key(key, size) & mask;; at = (at + 1) & mask) {
    Slot& slot = slots_[at];
    if (slot.stamp != stamp_) {  // a free slot: the key is new
      if (static_cast<size_t>(count_) >= most_keys_ || arena_.size() + size > arena_.capacity()) return -1;
      slot = {stamp_, arena_.size(), size, count_++};
      arena_.insert(arena_.end(), key, key + size);
      added = true;
      return slot.number;
    }
    if (slot.size == size && same(key, arena_.data() + slot.at, size)) return slot.number;
  }
}

int64_t KeyTable::bytes() const {
  return static_cast<int64_t>(slots_.capacity() * sizeof(Slot) + arena_.capacity() * sizeof(int64_t));
}

void WordTable::reserve(size_t most_keys) {
  most_keys_ = most_keys;
  slots_.assign(std::bit_ceil(2 * most_keys + 1), Slot{});
  stamp_ = 0;
  count_ = 0;
}

int WordTable::find_or_add(uint64_t key, bool& added) {
  added = false;
  if (slots_.empty()) return -1;
  const size_t mask = slots_.size() - 1;
  uint64_t h = key * 0x9e3779b97f4a7c15ULL;
  h ^= h >> 32;
  for (size_t at = h & mask;; at = (at + 1) & mask) {
    Slot& slot = slots_[at];
    if (slot.stamp != stamp_) {
      if (static_cast<size_t>(count_) >= most_keys_) return -1;
      slot = {stamp_, key, count_++};
      added = true;
      return slot.number;
    }
    if (slot.key == key) return slot.number;
  }
}

int64_t WordTable::bytes() const { return static_cast<int64_t>(slots_.capacity() * sizeof(Slot)); }

}  // namespace layerplan
