#include "runtime/executor/transport.h"

namespace layerplan {

std::pair<int64_t, int64_t> ring_chunk(int64_t n, int p, int index) {
  const int64_t base = n / p, extra = n % p;
  const int64_t begin = index * base + std::min<int64_t>(index, extra);
  return {begin, begin + base + (index < extra ? 1 : 0)};
}

}  // namespace layerplan
