#pragma once
// Measured profiles (docs/cost-model.md, "Measured profiles"): per-layer kernel times
// measured on one device, keyed by what decides a kernel's time: the layer's kind and its
// own settings (window, groups, activation function), the slowest tile's input and output
// shapes, the precision and the device's model name. `layerplan predict --profile-db-out`
// writes them from the CPU ranks it times; the planner's cost model takes a layer's
// forward and backward time from them, where they hold its key, instead of its roofline.
// A JSON file (docs/profile-db.md), read with the same checks as plan files.
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "model/geometry.h"
#include "model/model_graph.h"

namespace layerplan {

// The input and output extents of one tile: the output's four, then each input slot's
// four (the region the tile reads), in slot order.
using TileShapes = std::vector<int64_t>;

struct TileShapesHash {
  size_t operator()(const TileShapes& shapes) const noexcept;
};

// The slowest tile of `layer` under `config`, as the cost model prices it: the output tile
// (every extent divides by its degree, so all tiles are this size) and, per input slot,
// the widest region any tile reads along each dimension (a halo clipped at a border makes
// the border tiles read less).
TileShapes slowest_tile_shapes(const ModelGraph& graph, const Layer& layer, const Configuration& config);

// The part of the key the layer gives: its kind and the settings that change its kernels
// ("conv2d k3x3 s1x1 p1x1 g1", "gelu"); shapes are keyed apart.
std::string profile_signature(const Layer& layer);

// One measured layer.
struct ProfileEntry {
  Layer layer;  // kind, window, groups, activation: what profile_signature() reads
  std::vector<std::array<int64_t, kNumDims>> inputs;
  std::array<int64_t, kNumDims> output{};
  std::string precision;    // "fp32", "tf32", "bf16", ...
  std::string device;       // a GPU's model name as the planner's devices carry it, or "cpu:MODEL NAME"
  double forward_s = 0;     // the median of the measured repeats
  double backward_s = 0;    // the same, of the backward pass (and, from predict, the SGD update)
  int64_t repeats = 0;      // how many repeats the medians are of
  std::string measured_on;  // where and how: host, tool, kernels

  TileShapes shapes() const;
};

// The forward and backward seconds of one entry.
struct ProfileTimes {
  double forward_s = 0;
  double backward_s = 0;
};

// The entries of a profile for one device model and precision, indexed by signature and
// tile shapes: what a cost model looks layers up in.
class DeviceProfile {
 public:
  using ShapeTable = std::unordered_map<TileShapes, ProfileTimes, TileShapesHash>;

  // `file_devices`: every "NAME (PRECISION)" of the file it came from, for messages.
  DeviceProfile(std::string device, std::string precision, std::string source,
                std::vector<std::string> file_devices = {})
      : device_(std::move(device)),
        precision_(std::move(precision)),
        source_(std::move(source)),
        file_devices_(std::move(file_devices)) {}

  void add(const ProfileEntry& entry);
  // The shapes measured for layers of this signature, or nullptr when none were.
  const ShapeTable* table(const std::string& signature) const;
  int64_t size() const { return size_; }
  const std::string& device() const { return device_; }
  const std::string& precision() const { return precision_; }
  const std::string& source() const { return source_; }  // the file, for messages
  const std::vector<std::string>& file_devices() const { return file_devices_; }

 private:
  std::string device_, precision_, source_;
  std::vector<std::string> file_devices_;
  std::unordered_map<std::string, ShapeTable> tables_;
  int64_t size_ = 0;
};

// A whole profile file: entries for any number of devices and precisions.
struct ProfileDb {
  std::string source;  // the file it was read from ("" when built in memory)
  std::vector<ProfileEntry> entries;

  // The entries measured on `device` (its model name, compared without regard to case) at
  // `precision`. An entry whose key repeats replaces the earlier one.
  DeviceProfile for_device(std::string_view device, std::string_view precision) const;
  // The device names and precisions the entries are for, "NAME (PRECISION)", sorted, once each.
  std::vector<std::string> devices() const;
};

// Reads and checks a profile file; every error is a UsageError naming the file, the entry
// (by its index) and the field: "profile db 'p.json': entries[3]: forward_s -1: expected
// a positive number of seconds".
ProfileDb read_profile_db(const std::string& path);
ProfileDb profile_db_from_json(const std::string& text, const std::string& path);
// The file's text (docs/profile-db.md), entries in the order given.
std::string profile_db_to_json(const ProfileDb& db);

// A model's layers looked up in one device's profile: each layer's table found once, so
// that a lookup costs the tile's shapes and one hash (the cost tables ask for millions).
class GraphProfile {
 public:
  GraphProfile() = default;
  GraphProfile(const ModelGraph& graph, std::shared_ptr<const DeviceProfile> profile);

  // The measured times of `layer`'s slowest tile under `config`, or nullptr.
  const ProfileTimes* find(const Layer& layer, const Configuration& config) const;
  bool empty() const { return profile_ == nullptr; }

 private:
  const ModelGraph* graph_ = nullptr;
  std::shared_ptr<const DeviceProfile> profile_;
  std::vector<const DeviceProfile::ShapeTable*> tables_;  // per layer id; nullptr: not measured
};

}  // namespace layerplan
