#include "model/profile_db.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "common/error.h"
#include "common/input_file.h"
#include "common/limits.h"
#include "common/text.h"
#include "model/json_input.h"

namespace layerplan {

using nlohmann::json;

namespace {

constexpr const char* kFormatName = "layerplan-profile-db";
constexpr int64_t kFormatVersion = 1;

bool has_window(LayerKind kind) {
  return kind == LayerKind::kConv2d || kind == LayerKind::kMaxPool || kind == LayerKind::kAvgPool;
}

bool has_groups(LayerKind kind) { return kind == LayerKind::kConv2d || kind == LayerKind::kChannelShuffle; }

// The kind as the file spells it: an activation by its function ("gelu"), as model files do.
std::string_view file_kind(const Layer& layer) {
  return layer.kind == LayerKind::kActivation ? activation_name(layer.activation) : kind_name(layer.kind);
}

void append_pair(std::string& out, char tag, int h, int w) {
  out += ' ';
  out += tag;
  out += std::to_string(h) + "x" + std::to_string(w);
}

}  // namespace

size_t TileShapesHash::operator()(const TileShapes& shapes) const noexcept {
  size_t h = shapes.size();
  for (const int64_t v : shapes) h ^= std::hash<int64_t>{}(v) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h;
}

TileShapes slowest_tile_shapes(const ModelGraph& graph, const Layer& layer, const Configuration& config) {
  TileShapes shapes;
  shapes.reserve(kNumDims * (1 + layer.inputs.size()));
  for (int d = 0; d < kNumDims; ++d) shapes.push_back(layer.output[d] / config.degrees[d]);
  for (int slot = 0; slot < static_cast<int>(layer.inputs.size()); ++slot) {
    for (int d = 0; d < kNumDims; ++d) {
      // The tiles along d, the other dimensions at their first tile: a region's extent
      // along d depends only on the tile's index along d.
      int64_t widest = 0;
      const int64_t size = layer.output[d] / config.degrees[d];
      for (int i = 0; i < config.degrees[d]; ++i) {
        Box out = Box::whole(layer.output);
        for (int e = 0; e < kNumDims; ++e) out.dim[static_cast<size_t>(e)].hi = layer.output[e] / config.degrees[e];
        out.dim[static_cast<size_t>(d)] = {i * size, (i + 1) * size};
        widest = std::max(widest, required_input_box(graph, layer, slot, out).dim[static_cast<size_t>(d)].size());
      }
      shapes.push_back(widest);
    }
  }
  return shapes;
}

// No more than planner/cost_tables.cc's layer signature tells apart: layers that share a
// cost table must share their measured times (the pooling modes and GELU's approximation
// are left out; bias is too, and costs next to nothing).
std::string profile_signature(const Layer& layer) {
  std::string s(file_kind(layer));
  const Window& w = layer.window;
  if (has_window(layer.kind)) {
    append_pair(s, 'k', w.kernel_h, w.kernel_w);
    append_pair(s, 's', w.stride_h, w.stride_w);
    append_pair(s, 'p', w.pad_h, w.pad_w);
  }
  if (has_groups(layer.kind)) s += " g" + std::to_string(layer.groups);
  return s;
}

TileShapes ProfileEntry::shapes() const {
  TileShapes s(output.begin(), output.end());
  for (const auto& in : inputs) s.insert(s.end(), in.begin(), in.end());
  return s;
}

void DeviceProfile::add(const ProfileEntry& entry) {
  ShapeTable& table = tables_[profile_signature(entry.layer)];
  const auto [at, added] = table.insert_or_assign(entry.shapes(), ProfileTimes{entry.forward_s, entry.backward_s});
  (void)at;
  if (added) ++size_;
}

const DeviceProfile::ShapeTable* DeviceProfile::table(const std::string& signature) const {
  const auto it = tables_.find(signature);
  return it == tables_.end() ? nullptr : &it->second;
}

DeviceProfile ProfileDb::for_device(std::string_view device, std::string_view precision) const {
  DeviceProfile profile{std::string(device), std::string(precision), source, devices()};
  const std::string want = ascii_lower(device);
  for (const ProfileEntry& e : entries) {
    if (e.precision == precision && ascii_lower(e.device) == want) profile.add(e);
  }
  return profile;
}

std::vector<std::string> ProfileDb::devices() const {
  std::set<std::string> names;
  for (const ProfileEntry& e : entries) names.insert(e.device + " (" + e.precision + ")");
  return {names.begin(), names.end()};
}

// Reading -------------------------------------------------------------------------------

namespace {

const json& need(const json& object, const char* key, const std::string& where) {
  const auto it = object.find(key);
  require(it != object.end(), where + ": missing " + key);
  return *it;
}

// A layer of the file's kind (a model file's kind name, an activation by its function).
Layer layer_of_kind(const std::string& kind, const std::string& where) {
  Layer layer;
  for (int k = static_cast<int>(LayerKind::kConv2d); k <= static_cast<int>(LayerKind::kChannelSlice); ++k) {
    const auto candidate = static_cast<LayerKind>(k);
    if (candidate != LayerKind::kActivation && candidate != LayerKind::kFlatten && kind_name(candidate) == kind) {
      layer.kind = candidate;
      return layer;
    }
  }
  for (int a = 0; a <= static_cast<int>(ActivationKind::kGelu); ++a) {
    if (activation_name(static_cast<ActivationKind>(a)) == kind) {
      layer.kind = LayerKind::kActivation;
      layer.activation = static_cast<ActivationKind>(a);
      return layer;
    }
  }
  throw UsageError(where + ": kind \"" + kind +
                   "\": expected a layer kind of model files, e.g. conv2d, max_pool, "
                   "fully_connected, batch_norm, relu, gelu (docs/profile-db.md)");
}

std::pair<int, int> read_pair(const json& window, const char* key, const std::string& where, int lo) {
  const json& v = need(window, key, where);
  const std::string name = std::string("window.") + key;
  require(v.is_array() && v.size() == 2, where + ": " + name + " " + describe_json(v) + ": expected [height, width]");
  return {static_cast<int>(json_integer(v[0], where, name + "[0]", lo, kMaxModelField)),
          static_cast<int>(json_integer(v[1], where, name + "[1]", lo, kMaxModelField))};
}

void read_window(const json& v, Layer& layer, const std::string& where) {
  require(v.is_object(), where + ": window " + describe_json(v) + ": expected an object");
  for (const auto& [key, value] : v.items()) {
    (void)value;
    require(key == "kernel" || key == "stride" || key == "padding",
            where + ": window." + key + ": not a field of a window (kernel, stride, padding)");
  }
  Window& w = layer.window;
  std::tie(w.kernel_h, w.kernel_w) = read_pair(v, "kernel", where, 1);
  std::tie(w.stride_h, w.stride_w) = read_pair(v, "stride", where, 1);
  std::tie(w.pad_h, w.pad_w) = read_pair(v, "padding", where, 0);
}

std::array<int64_t, kNumDims> read_shape(const json& v, const std::string& where, const std::string& name) {
  require(v.is_array() && v.size() == kNumDims,
          where + ": " + name + " " + describe_json(v) + ": expected [n, c, h, w], four extents");
  std::array<int64_t, kNumDims> shape{};
  for (size_t d = 0; d < shape.size(); ++d) {
    shape[d] = json_integer(v[d], where, name + "[" + std::to_string(d) + "]", 1, kMaxModelField);
  }
  return shape;
}

std::string read_text(const json& entry, const char* key, const std::string& where) {
  std::string text = json_string(need(entry, key, where), where, key);
  require(!text.empty(), where + ": " + key + " \"\": expected a name");
  return text;
}

double read_seconds(const json& entry, const char* key, const std::string& where) {
  const double s = json_number(need(entry, key, where), where, key);
  require(s >= 0, where + ": " + key + " " + describe_json(entry[key]) + ": expected seconds, 0 or more");
  return s;
}

// The kind's own fields: a window for conv and pooling, groups for conv and channel shuffle.
void read_layer_fields(const json& entry, Layer& layer, const std::string& where) {
  if (has_window(layer.kind)) read_window(need(entry, "window", where), layer, where);
  if (has_groups(layer.kind)) {
    layer.groups = static_cast<int>(json_integer(need(entry, "groups", where), where, "groups", 1, kMaxModelField));
  }
}

void require_known_fields(const json& entry, const Layer& layer, const std::string& where) {
  static const std::set<std::string> kFields = {"kind",      "inputs",     "output",  "precision",  "device",
                                                "forward_s", "backward_s", "repeats", "measured_on"};
  for (const auto& [key, value] : entry.items()) {
    (void)value;
    const bool own = (key == "window" && has_window(layer.kind)) || (key == "groups" && has_groups(layer.kind));
    require(own || kFields.count(key) != 0,
            where + ": " + key + ": not a field of a " + std::string(file_kind(layer)) + " entry (docs/profile-db.md)");
  }
}

ProfileEntry read_entry(const json& entry, const std::string& where) {
  require(entry.is_object(), where + ": " + describe_json(entry) + ": expected an object");
  ProfileEntry e;
  e.layer = layer_of_kind(json_string(need(entry, "kind", where), where, "kind"), where);
  require_known_fields(entry, e.layer, where);
  read_layer_fields(entry, e.layer, where);
  const json& inputs = need(entry, "inputs", where);
  require(inputs.is_array() && !inputs.empty() && static_cast<int64_t>(inputs.size()) <= kMaxLayerInputs,
          where + ": inputs " + describe_json(inputs) + ": expected an array of 1 to " +
              std::to_string(kMaxLayerInputs) + " shapes [n, c, h, w]");
  for (size_t i = 0; i < inputs.size(); ++i)
    e.inputs.push_back(read_shape(inputs[i], where, "inputs[" + std::to_string(i) + "]"));
  e.output = read_shape(need(entry, "output", where), where, "output");
  e.precision = read_text(entry, "precision", where);
  e.device = read_text(entry, "device", where);
  e.forward_s = read_seconds(entry, "forward_s", where);
  e.backward_s = read_seconds(entry, "backward_s", where);
  e.repeats = json_integer(need(entry, "repeats", where), where, "repeats", 1, int64_t{1} << 30);
  e.measured_on = json_string(need(entry, "measured_on", where), where, "measured_on");
  return e;
}

}  // namespace

ProfileDb profile_db_from_json(const std::string& text, const std::string& path) {
  const std::string label = "profile db '" + path + "'";
  const json doc = parse_json_input(text, label);
  require(doc.is_object(), label + ": " + describe_json(doc) + ": expected an object (docs/profile-db.md)");
  const auto format = doc.find("format");
  require(format != doc.end() && format->is_string() && format->get<std::string>() == kFormatName,
          label + ": format " + (format == doc.end() ? std::string("missing") : describe_json(*format)) +
              ": expected \"" + kFormatName + "\" (docs/profile-db.md)");
  const int64_t version = json_integer(need(doc, "version", label), label, "version", 1, 1 << 20);
  require(version == kFormatVersion, label + ": version " + std::to_string(version) + ": expected " +
                                         std::to_string(kFormatVersion) + ", the version this layerplan reads");
  for (const auto& [key, value] : doc.items()) {
    (void)value;
    require(key == "format" || key == "version" || key == "entries",
            label + ": " + key + ": not a field of a profile db");
  }
  const json& entries = need(doc, "entries", label);
  require(entries.is_array(), label + ": entries " + describe_json(entries) + ": expected an array");
  ProfileDb db;
  db.source = path;
  db.entries.reserve(entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    db.entries.push_back(read_entry(entries[i], label + ": entries[" + std::to_string(i) + "]"));
  }
  return db;
}

ProfileDb read_profile_db(const std::string& path) {
  return profile_db_from_json(read_input_file(path, "profile db '" + path + "'", kMaxTextInputBytes), path);
}

// Writing -------------------------------------------------------------------------------

namespace {

nlohmann::ordered_json entry_json(const ProfileEntry& e) {
  using nlohmann::ordered_json;
  const Layer& l = e.layer;
  ordered_json out;
  out["kind"] = file_kind(l);
  if (has_window(l.kind)) {
    const Window& w = l.window;
    out["window"] = {
        {"kernel", {w.kernel_h, w.kernel_w}}, {"stride", {w.stride_h, w.stride_w}}, {"padding", {w.pad_h, w.pad_w}}};
  }
  if (has_groups(l.kind)) out["groups"] = l.groups;
  out["inputs"] = e.inputs;
  out["output"] = e.output;
  out["precision"] = e.precision;
  out["device"] = e.device;
  out["forward_s"] = e.forward_s;
  out["backward_s"] = e.backward_s;
  out["repeats"] = e.repeats;
  out["measured_on"] = e.measured_on;
  return out;
}

}  // namespace

std::string profile_db_to_json(const ProfileDb& db) {
  nlohmann::ordered_json entries = nlohmann::ordered_json::array();
  for (const ProfileEntry& e : db.entries) entries.push_back(entry_json(e));
  const nlohmann::ordered_json doc{{"format", kFormatName}, {"version", kFormatVersion}, {"entries", entries}};
  return doc.dump(1) + "\n";
}

// Looking up ------------------------------------------------------------------------------

GraphProfile::GraphProfile(const ModelGraph& graph, std::shared_ptr<const DeviceProfile> profile)
    : graph_(&graph), profile_(std::move(profile)) {
  if (profile_ == nullptr) return;
  tables_.reserve(static_cast<size_t>(graph.size()));
  for (const Layer& layer : graph.layers()) {
    const bool priced = layer.kind != LayerKind::kInput && layer.kind != LayerKind::kFlatten;
    tables_.push_back(priced ? profile_->table(profile_signature(layer)) : nullptr);
  }
}

const ProfileTimes* GraphProfile::find(const Layer& layer, const Configuration& config) const {
  if (profile_ == nullptr) return nullptr;
  const DeviceProfile::ShapeTable* table = tables_[static_cast<size_t>(layer.id)];
  if (table == nullptr) return nullptr;
  const auto it = table->find(slowest_tile_shapes(*graph_, layer, config));
  return it == table->end() ? nullptr : &it->second;
}

}  // namespace layerplan
