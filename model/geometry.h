#pragma once
// Partition geometry: configurations, the tiles they cut a tensor into, the input region
// a tile reads, and the exact elements that move between the tiles of a producer and
// the tiles of a consumer. The cost model prices these volumes and the runtime moves
// them, so both use this one module.
#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "common/index.h"
#include "model/model_graph.h"

namespace layerplan {

// Half-open range [lo, hi) of indices along one dimension.
struct Interval {
  int64_t lo = 0, hi = 0;
  int64_t size() const { return hi > lo ? hi - lo : 0; }
  bool operator==(const Interval&) const = default;
};

// A box of an NCHW tensor: one interval per dimension.
struct Box {
  std::array<Interval, kNumDims> dim;
  int64_t volume() const;
  bool empty() const { return volume() == 0; }
  static Box whole(const Shape& shape);
  std::string str() const;  // "[0,8)x[0,64)x[0,56)x[0,56)"
  bool operator==(const Box&) const = default;
};
Box intersect(const Box& a, const Box& b);

// Degree of parallelism per dimension (NCHW order); their product is the tile count.
struct Degrees {
  std::array<int, kNumDims> d{1, 1, 1, 1};
  int operator[](int dim) const { return d[static_cast<size_t>(dim)]; }
  // The tile count; throws std::overflow_error when it does not fit in an int (degrees read
  // from input are checked against the device count before anything multiplies them).
  int product() const {
    const std::optional<int64_t> p = checked_product({d[0], d[1], d[2], d[3]});
    if (!p || *p > std::numeric_limits<int>::max()) throw_too_many_tiles();
    return static_cast<int>(*p);
  }
  std::string str() const;  // "n4 h2 w2"; "n1" when nothing is split
  bool operator==(const Degrees&) const = default;

 private:
  [[noreturn]] void throw_too_many_tiles() const;
};

// Tiles are numbered with the channel index innermost, then width, height and sample:
// t = ((n_i * dh + h_i) * dw + w_i) * dc + c_i. Channel shards of one sample block thus
// sit on neighbouring devices (inside a node), and sample blocks spread across nodes.
std::array<int, kNumDims> tile_coords(const Degrees& degrees, int tile);
int tile_index(const Degrees& degrees, const std::array<int, kNumDims>& coords);
// The box of tile `tile`; every extent must be divisible by its degree.
Box tile_box(const Shape& shape, const Degrees& degrees, int tile);

// How one layer is parallelized: degrees, and the device that computes each tile.
struct Configuration {
  Degrees degrees;
  std::vector<int> devices;  // devices[t] computes tile t; all distinct
  int tiles() const { return static_cast<int>(devices.size()); }
  std::string str() const;  // "n4 h2 w2 on gpus 0-15"
  bool operator==(const Configuration&) const = default;
};
std::vector<Box> tiles(const Shape& shape, const Configuration& config);
// The devices that compute some tile of the plan, ascending: the devices that train it
// (a device the plan leaves idle takes part in nothing, the loss's reduction included).
std::vector<int> devices_used(const std::vector<Configuration>& plan);

// The region of input `slot` that the consumer must read to compute `out_box` of its
// output: the halo of a sliding window (clipped to the input), the input channels of the
// groups of a convolution's output channels (all of them unless it is grouped; a
// depthwise one reads just its own channels), all input features of a fully-connected
// layer, the channel range of one concat input (in that input's coordinates; empty if the
// box misses it), the samples and channels of a mul's (n, c, 1, 1) scale, every channel
// of a channel shuffle (which is never split along channels), the channels of a channel
// slice shifted by its first channel.
Box required_input_box(const ModelGraph& graph, const Layer& consumer, int slot, const Box& out_box);

// Elements that move from device src to device dst (src != dst) for one edge.
struct PairVolume {
  int src = 0, dst = 0;
  int64_t elements = 0;
  bool operator==(const PairVolume&) const = default;
};

// Forward activations from `producer` tiles to the consumer tiles that read them, by box
// intersection, summed per (src, dst) device pair and sorted by (src, dst). Backward
// gradients move exactly the same volumes from dst back to src (the consumer's partial
// input gradients are summed on the producer that owns the region).
std::vector<PairVolume> transfer_volumes(const ModelGraph& graph, const Layer& consumer, int slot,
                                         const Configuration& producer, const Configuration& consumer_config);

// Calls visit(src_device, dst_device, elements) for every (producer tile, consumer tile)
// pair on different devices whose boxes overlap. This is the loop the cost model runs for
// every pair of configurations, so it enumerates only the producer tiles that overlap
// each required box.
template <typename Visit>
void for_each_transfer(const ModelGraph& graph, const Layer& consumer, int slot, const Configuration& producer,
                       const Configuration& consumer_config, Visit&& visit);

}  // namespace layerplan

#include "model/geometry_inl.h"
