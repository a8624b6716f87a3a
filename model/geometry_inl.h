#pragma once
// Template body of for_each_transfer (included by geometry.h).

namespace layerplan {

template <typename Visit>
void for_each_transfer(const ModelGraph& graph, const Layer& consumer, int slot, const Configuration& producer,
                       const Configuration& consumer_config, Visit&& visit) {
  const Shape& in_shape = graph.input_shape(consumer, slot);
  const Degrees& pd = producer.degrees;
  for (int q = 0; q < consumer_config.tiles(); ++q) {
    const Box need = required_input_box(graph, consumer, slot, tile_box(consumer.output, consumer_config.degrees, q));
    if (need.empty()) continue;
    // Per dimension, the producer tile indices whose interval overlaps the need.
    std::array<int, kNumDims> first{}, last{};
    for (int d = 0; d < kNumDims; ++d) {
      const int64_t size = in_shape[d] / pd[d];
      first[static_cast<size_t>(d)] = static_cast<int>(need.dim[static_cast<size_t>(d)].lo / size);
      last[static_cast<size_t>(d)] = static_cast<int>((need.dim[static_cast<size_t>(d)].hi - 1) / size);
    }
    const int dst = consumer_config.devices[static_cast<size_t>(q)];
    std::array<int, kNumDims> at = first;
    while (true) {
      const int p = tile_index(pd, at);
      const int src = producer.devices[static_cast<size_t>(p)];
      if (src != dst) {
        int64_t elements = 1;
        for (int d = 0; d < kNumDims; ++d) {
          const int64_t size = in_shape[d] / pd[d];
          const auto i = static_cast<size_t>(d);
          const int64_t lo = std::max(need.dim[i].lo, at[i] * size);
          const int64_t hi = std::min(need.dim[i].hi, (at[i] + 1) * size);
          elements *= hi - lo;
        }
        visit(src, dst, elements);
      }
      int d = kNumDims - 1;
      for (; d >= 0; --d) {
        const auto i = static_cast<size_t>(d);
        if (++at[i] <= last[i]) break;
        at[i] = first[i];
      }
      if (d < 0) break;
    }
  }
}

}  // namespace layerplan
