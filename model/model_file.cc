#include "model/model_file.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <vector>

#include "common/error.h"
#include "common/input_file.h"
#include "common/limits.h"
#include "common/text.h"
#include "model/content_hash.h"
#include "model/json_input.h"
#include "model/onnx_model.h"
#include "model/zoo.h"

namespace layerplan {

namespace {

using nlohmann::json;

// Reads the fields of one layer entry, with errors that name the layer, the field, its
// value (shortened) and what was expected.
class LayerEntry {
 public:
  LayerEntry(const json& entry, std::string where) : entry_(entry), where_(std::move(where)) {}

  const std::string& where() const { return where_; }
  bool has(const char* key) const { return entry_.contains(key); }

  std::string text(const char* key) const { return json_string(field(key), where_, key); }
  int integer(const char* key, int minimum) const {
    return static_cast<int>(json_integer(field(key), where_, key, minimum, kMaxModelField));
  }
  int integer_or(const char* key, int minimum, int fallback) const {
    return has(key) ? integer(key, minimum) : fallback;
  }
  double number_or(const char* key, double fallback) const {
    return has(key) ? json_number(entry_[key], where_, key) : fallback;
  }
  bool boolean_or(const char* key, bool fallback) const {
    if (!has(key)) return fallback;
    if (!entry_[key].is_boolean())
      fail(std::string(key) + " " + describe_json(entry_[key]) + ": expected true or false");
    return entry_[key].get<bool>();
  }
  [[noreturn]] void fail(const std::string& what) const { throw UsageError(where_ + ": " + what); }

 private:
  const json& field(const char* key) const {
    if (!has(key)) fail(std::string("missing ") + key);
    return entry_[key];
  }
  const json& entry_;
  std::string where_;
};

const std::map<std::string, std::vector<std::string>>& allowed_fields() {
  static const std::map<std::string, std::vector<std::string>> fields = {
      {"conv2d", {"out_channels", "kernel", "stride", "padding", "bias", "groups"}},
      {"max_pool", {"kernel", "stride", "padding", "ceil_mode"}},
      {"avg_pool", {"kernel", "stride", "padding", "ceil_mode", "count_include_pad"}},
      {"global_avg_pool", {}},
      {"fully_connected", {"out_features", "bias"}},
      {"relu", {}},
      {"batch_norm", {"epsilon", "momentum"}},
      {"dropout", {"ratio"}},
      {"flatten", {}},
      {"concat", {}},
      {"add", {}},
      {"softmax_cross_entropy", {}},
      {"clip", {"min", "max"}},
      {"relu6", {}},
      {"sigmoid", {}},
      {"silu", {}},
      {"hardsigmoid", {"alpha", "beta"}},
      {"hardswish", {}},
      {"gelu", {"approximate"}},
      {"mul", {}},
      {"channel_shuffle", {"groups"}},
      {"channel_slice", {"first_channel", "channels"}},
  };
  return fields;
}

// kernel/stride/padding: a number for both axes, or [height, width].
constexpr int64_t kMaxWindow = 4096;
std::pair<int, int> pair_field(const LayerEntry& e, const json& entry, const char* key, int minimum, int fallback) {
  if (!e.has(key)) return {fallback, fallback};
  const json& v = entry[key];
  if (v.is_array()) {
    if (v.size() != 2) {
      e.fail(std::string(key) + " " + describe_json(v) + ": expected an integer or [height, width] of integers");
    }
    return {static_cast<int>(json_integer(v[0], e.where(), std::string(key) + "[0]", minimum, kMaxWindow)),
            static_cast<int>(json_integer(v[1], e.where(), std::string(key) + "[1]", minimum, kMaxWindow))};
  }
  const int both = e.integer(key, minimum);
  return {both, both};
}

Window window_of(const LayerEntry& e, const json& entry) {
  const auto [kh, kw] = pair_field(e, entry, "kernel", 1, 1);
  const auto [sh, sw] = pair_field(e, entry, "stride", 1, 1);
  const auto [ph, pw] = pair_field(e, entry, "padding", 0, 0);
  return Window{kh, kw, sh, sw, ph, pw, e.boolean_or("ceil_mode", false), e.boolean_or("count_include_pad", true)};
}

std::vector<int> inputs_of(const LayerEntry& e, const json& entry, const std::map<std::string, int>& ids,
                           int previous) {
  std::vector<std::string> names;
  if (entry.contains("inputs")) {
    const json& list = entry["inputs"];
    if (!list.is_array() || static_cast<int64_t>(list.size()) > kMaxLayerInputs) {
      e.fail("inputs " + describe_json(list) + ": expected an array of at most " + std::to_string(kMaxLayerInputs) +
             " layer names");
    }
    for (const json& n : list) names.push_back(json_string(n, e.where(), "inputs entry"));
  } else if (entry.contains("input")) {
    names.push_back(e.text("input"));
  } else {
    return {previous};  // the layer before it
  }
  std::vector<int> out;
  for (const std::string& n : names) {
    const auto it = ids.find(n);
    if (it == ids.end()) e.fail("input '" + clipped(n) + "' is not an earlier layer");
    out.push_back(it->second);
  }
  return out;
}

// The activation kinds (clip, relu6, sigmoid, silu, hardsigmoid, hardswish, gelu); nullopt
// for another kind.
std::optional<int> add_activation(ModelGraph& g, const LayerEntry& e, const std::string& kind, const std::string& name,
                                  int x) {
  if (kind == "clip") {
    if (!e.has("min") && !e.has("max")) e.fail("a clip layer needs min, max or both");
    const double lowest = -std::numeric_limits<float>::max();
    return g.activation(name, x, ActivationKind::kClip, e.number_or("min", lowest), e.number_or("max", -lowest));
  }
  if (kind == "relu6") return g.activation(name, x, ActivationKind::kClip, 0.0, 6.0);
  if (kind == "sigmoid") return g.activation(name, x, ActivationKind::kSigmoid);
  if (kind == "silu") return g.activation(name, x, ActivationKind::kSilu);
  if (kind == "hardsigmoid") {
    return g.activation(name, x, ActivationKind::kHardSigmoid, e.number_or("alpha", kHardSigmoidAlpha),
                        e.number_or("beta", kHardSigmoidBeta));
  }
  if (kind == "hardswish") return g.activation(name, x, ActivationKind::kHardSwish);
  if (kind == "gelu") {
    const std::string approximate = e.has("approximate") ? e.text("approximate") : "none";
    if (approximate != "none" && approximate != "tanh") {
      e.fail("approximate '" + clipped(approximate) + "': expected none or tanh");
    }
    return g.gelu(name, x, approximate == "tanh" ? GeluApproximation::kTanh : GeluApproximation::kNone);
  }
  return std::nullopt;
}

int add_layer(ModelGraph& g, const LayerEntry& e, const json& entry, const std::string& kind, const std::string& name,
              const std::vector<int>& in) {
  const bool many = kind == "concat" || kind == "add";
  if (kind == "mul") {
    if (in.size() != 2) e.fail("mul takes two inputs, [input, scale]");
    return g.mul(name, in[0], in[1]);
  }
  if (!many && in.size() != 1) e.fail(kind + " takes one input");
  const int x = in.front();
  if (const std::optional<int> id = add_activation(g, e, kind, name, x)) return *id;
  if (kind == "conv2d")
    return g.conv2d(name, x, e.integer("out_channels", 1), window_of(e, entry), e.boolean_or("bias", true),
                    e.integer_or("groups", 1, 1));
  if (kind == "max_pool") return g.max_pool(name, x, window_of(e, entry));
  if (kind == "avg_pool") return g.avg_pool(name, x, window_of(e, entry));
  if (kind == "global_avg_pool") return g.global_avg_pool(name, x);
  if (kind == "fully_connected")
    return g.fully_connected(name, x, e.integer("out_features", 1), e.boolean_or("bias", true));
  if (kind == "relu") return g.relu(name, x);
  if (kind == "batch_norm") {
    return g.batch_norm(name, x, e.number_or("epsilon", kDefaultBatchNormEpsilon),
                        e.number_or("momentum", kDefaultBatchNormMomentum));
  }
  if (kind == "dropout") return g.dropout(name, x, e.number_or("ratio", kDefaultDropoutRatio));
  if (kind == "flatten") return g.flatten(name, x);
  if (kind == "concat") return g.concat(name, in);
  if (kind == "add") return g.add(name, in);
  if (kind == "channel_shuffle") return g.channel_shuffle(name, x, e.integer("groups", 2));
  if (kind == "channel_slice") return g.channel_slice(name, x, e.integer("first_channel", 0), e.integer("channels", 1));
  return g.softmax_cross_entropy(name, x);
}

}  // namespace

namespace {

// The top level of a model file: its format, version and fields.
void check_model_header(const json& doc, const LayerEntry& top, const std::string& origin) {
  require(doc.is_object(), origin + ": expected a JSON object with format, version, name, input and layers");
  const json* format = doc.contains("format") ? &doc["format"] : nullptr;
  require(format && format->is_string() && format->get_ref<const std::string&>() == "layerplan-model",
          origin + ": not a layerplan model file (format " +
              (format ? describe_json(*format) : std::string("missing")) + ", expected \"layerplan-model\")");
  require(doc.contains("version") && doc["version"].is_number_integer() &&
              doc["version"].get<int64_t>() == kModelFormatVersion,
          origin + ": model format version " +
              (doc.contains("version") ? describe_json(doc["version"]) : std::string("missing")) + ": expected " +
              std::to_string(kModelFormatVersion));
  for (const auto& [key, value] : doc.items()) {
    if (key != "format" && key != "version" && key != "name" && key != "input" && key != "layers") {
      top.fail("unknown field '" + clipped(key) + "'");
    }
  }
}

// Adds the input layer, named "input", for `batch` images.
int add_input(ModelGraph& g, const json& doc, int64_t batch, const std::string& origin) {
  require(doc.contains("input") && doc["input"].is_object(),
          origin + ": input must be an object {channels, height, width}");
  const LayerEntry input(doc["input"], origin + ": input");
  const Shape shape{{batch, input.integer("channels", 1), input.integer("height", 1), input.integer("width", 1)}};
  try {
    return g.input("input", shape);
  } catch (const std::invalid_argument& err) {
    input.fail(err.what());
  }
}

// Adds layer entry `index`; returns its id.
int add_entry(ModelGraph& g, const json& entry, int index, std::map<std::string, int>& ids, int previous,
              const std::string& origin) {
  const std::string where = origin + ": layers[" + std::to_string(index) + "]";
  require(entry.is_object(), where + ": expected an object");
  const LayerEntry e(entry, entry.contains("name") && entry["name"].is_string()
                                ? where + " '" + clipped(entry["name"].get_ref<const std::string&>()) + "'"
                                : where);
  const std::string name = e.text("name");
  const std::string kind = e.text("kind");
  const auto allowed = allowed_fields().find(kind);
  if (allowed == allowed_fields().end()) {
    e.fail("unknown kind '" + clipped(kind) +
           "': expected conv2d, max_pool, avg_pool, global_avg_pool, fully_connected, "
           "relu, batch_norm, dropout, flatten, concat, add, softmax_cross_entropy, clip, relu6, sigmoid, silu, "
           "hardsigmoid, hardswish, gelu, mul, channel_shuffle or channel_slice");
  }
  for (const auto& [key, value] : entry.items()) {
    const bool known = key == "name" || key == "kind" || key == "input" || key == "inputs" ||
                       std::find(allowed->second.begin(), allowed->second.end(), key) != allowed->second.end();
    if (!known) e.fail("unknown field '" + clipped(key) + "' for a " + kind + " layer");
  }
  if (ids.count(name)) e.fail("a layer named '" + clipped(name) + "' exists already");
  const std::vector<int> in = inputs_of(e, entry, ids, previous);
  int id = 0;
  try {
    id = add_layer(g, e, entry, kind, name, in);
  } catch (const std::invalid_argument& err) {
    e.fail(clipped(err.what(), 4 * kMaxQuotedChars));
  }
  ids[name] = id;
  return id;
}

}  // namespace

ModelGraph model_from_json(const std::string& text, int64_t batch, const std::string& origin) {
  require(batch >= 1 && batch <= kMaxBatch,
          "batch " + std::to_string(batch) + ": expected 1 to " + std::to_string(kMaxBatch) + " images");
  const json doc = parse_json_input(text, origin);
  const LayerEntry top(doc, origin);
  check_model_header(doc, top, origin);
  ModelGraph g(clipped(top.text("name"), 4 * kMaxQuotedChars));
  std::map<std::string, int> ids{{"input", add_input(g, doc, batch, origin)}};
  require(doc.contains("layers") && doc["layers"].is_array() && !doc["layers"].empty(),
          origin + ": layers must be a non-empty array");
  require(static_cast<int64_t>(doc["layers"].size()) < kMaxLayers,
          origin + ": " + std::to_string(doc["layers"].size()) + " layers, more than " +
              std::to_string(kMaxLayers - 1) + ", the limit");
  int previous = 0;
  int index = 0;
  for (const json& entry : doc["layers"]) previous = add_entry(g, entry, index++, ids, previous, origin);
  return g;
}

namespace {

// A conv's, pool's, fully-connected layer's or channel permutation's own fields; pooling
// modes, bias and groups only where not the default.
void add_shape_fields(const Layer& l, nlohmann::ordered_json& entry) {
  using nlohmann::ordered_json;
  auto pair = [](int h, int w) { return h == w ? ordered_json(h) : ordered_json::array({h, w}); };
  const Window& w = l.window;
  switch (l.kind) {
    case LayerKind::kConv2d:
      entry["out_channels"] = l.output.c();
      [[fallthrough]];
    case LayerKind::kMaxPool:
    case LayerKind::kAvgPool:
      entry["kernel"] = pair(w.kernel_h, w.kernel_w);
      entry["stride"] = pair(w.stride_h, w.stride_w);
      entry["padding"] = pair(w.pad_h, w.pad_w);
      if (l.kind == LayerKind::kConv2d) entry["bias"] = l.has_bias;
      if (l.kind == LayerKind::kConv2d && l.groups > 1) entry["groups"] = l.groups;
      if (w.ceil_mode) entry["ceil_mode"] = true;
      if (!w.count_include_pad) entry["count_include_pad"] = false;
      break;
    case LayerKind::kFullyConnected:
      entry["out_features"] = l.output.c();
      entry["bias"] = l.has_bias;
      break;
    case LayerKind::kChannelShuffle:
      entry["groups"] = l.groups;
      break;
    case LayerKind::kChannelSlice:
      entry["first_channel"] = l.first_channel;
      entry["channels"] = l.output.c();
      break;
    default:
      break;
  }
}

// Batch norm's and dropout's settings where they are not PyTorch's defaults, and an
// activation's constants.
void add_settings(const Layer& l, nlohmann::ordered_json& entry) {
  if (l.kind == LayerKind::kBatchNorm) {
    if (l.epsilon != kDefaultBatchNormEpsilon) entry["epsilon"] = l.epsilon;
    if (l.momentum != kDefaultBatchNormMomentum) entry["momentum"] = l.momentum;
  } else if (l.kind == LayerKind::kDropout && l.dropout_ratio != kDefaultDropoutRatio) {
    entry["ratio"] = l.dropout_ratio;
  } else if (l.kind == LayerKind::kActivation && l.activation == ActivationKind::kClip) {
    entry["min"] = l.alpha;
    entry["max"] = l.beta;
  } else if (l.kind == LayerKind::kActivation && l.activation == ActivationKind::kHardSigmoid) {
    entry["alpha"] = l.alpha;
    entry["beta"] = l.beta;
  } else if (l.kind == LayerKind::kActivation && l.activation == ActivationKind::kGelu &&
             l.gelu_approximation != GeluApproximation::kNone) {
    entry["approximate"] = std::string(gelu_approximation_name(l.gelu_approximation));
  }
}

}  // namespace

std::string model_to_json(const ModelGraph& graph) {
  using nlohmann::ordered_json;  // keys in the order written, as a person reads them
  const Shape& in = graph.layer(0).output;
  ordered_json layers = ordered_json::array();
  for (const Layer& l : graph.layers()) {
    if (l.kind == LayerKind::kInput) continue;
    const std::string_view kind = l.kind == LayerKind::kActivation ? activation_name(l.activation) : kind_name(l.kind);
    ordered_json entry = {{"name", l.name}, {"kind", std::string(kind)}};
    if (l.inputs.size() == 1 && l.inputs[0] != l.id - 1) entry["input"] = graph.layer(l.inputs[0]).name;
    if (l.inputs.size() > 1) {
      ordered_json names = ordered_json::array();
      for (int i : l.inputs) names.push_back(graph.layer(i).name);
      entry["inputs"] = names;
    }
    add_shape_fields(l, entry);
    add_settings(l, entry);
    layers.push_back(entry);
  }
  const ordered_json doc = {{"format", "layerplan-model"},
                            {"version", kModelFormatVersion},
                            {"name", graph.name()},
                            {"input", {{"channels", in.c()}, {"height", in.h()}, {"width", in.w()}}},
                            {"layers", layers}};
  return doc.dump(2) + "\n";
}

bool is_zoo_model(const std::string& name) {
  for (const std::string& z : zoo_model_names()) {
    if (z == name) return true;
  }
  return false;
}

namespace {

// `path` made absolute against the working directory, without its `.` components. `..`
// stays: after a symlinked folder it is not the folder's parent, and the name must say
// the file that was read.
std::string absolute_path(const std::string& path) {
  std::filesystem::path out;
  for (const std::filesystem::path& part : std::filesystem::absolute(path)) {
    if (part != "." && !part.empty()) out /= part;
  }
  return out.string();
}

// The model in the file at `path` (ONNX when it ends in .onnx, else a model file), named
// `shown` in errors; with `digest` kRecord it remembers the file (ModelGraph::file()).
ModelGraph read_model(const std::string& path, const std::string& shown, int64_t batch, ModelDigest digest) {
  const bool record = digest == ModelDigest::kRecord;
  if (is_onnx_path(path)) {
    const InputFile file(path, "ONNX file '" + shown + "'", kMaxOnnxFileBytes);  // read in parts, weights skipped
    // All the bytes are read once for the hash; the graph's reader then reads the
    // structure only, from the page cache.
    const FileDigest hash = record ? file_digest(file) : FileDigest{};
    ModelGraph graph = model_from_onnx(file, batch, shown, std::filesystem::path(path).filename().string());
    if (record) graph.set_file({absolute_path(path), hash.size, hash.sha256});
    return graph;
  }
  const std::string text = read_input_file(path, "model file '" + shown + "'", kMaxTextInputBytes);
  ModelGraph graph = model_from_json(text, batch, shown);
  if (record) graph.set_file({absolute_path(path), static_cast<int64_t>(text.size()), sha256_hex(text)});
  return graph;
}

// The model in the file at `path`, or nullopt when no regular file is there (the search
// goes on); throws when it exists but cannot be read. The check by name only picks the
// candidates: the read refuses, on the open file, anything that is not (or is no longer)
// a regular file.
std::optional<ModelGraph> read_model_file(const std::string& path, int64_t batch, ModelDigest digest) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return std::nullopt;
  return read_model(path, path, batch, digest);
}

}  // namespace

std::optional<ModelGraph> read_model_file_at(const std::string& path, int64_t batch) {
  return read_model_file(path, batch, ModelDigest::kRecord);
}

ModelGraph resolve_model(const std::string& name, const std::vector<std::string>& model_path, int64_t batch,
                         ModelDigest digest) {
  require(!name.empty(), "model '': expected a zoo model name or a model file");
  if (is_zoo_model(name)) return build_zoo_model(name, batch);
  const bool has_slash = name.find('/') != std::string::npos;
  if (has_slash || name.ends_with(".json") || (is_onnx_path(name) && model_path.empty())) {
    // A path names one file: whatever is there is read or refused, saying why.
    return read_model(name, clipped(name, 4 * kMaxQuotedChars), batch, digest);
  }
  std::vector<std::string> tried;
  if (is_onnx_path(name)) tried.push_back(name);  // an ONNX file here, else in the model path
  for (const std::string& dir : model_path) {
    tried.push_back(dir + "/" + name + ".json");
    tried.push_back(dir + "/" + name + ".onnx");
    tried.push_back(dir + "/" + name);
  }
  for (const std::string& path : tried) {
    if (auto graph = read_model_file(path, batch, digest)) return std::move(*graph);
  }
  std::string known;
  for (const std::string& z : zoo_model_names()) known += (known.empty() ? "" : ", ") + z;
  throw UsageError("unknown model '" + clipped(name) + "': expected one of " + known +
                   (model_path.empty()
                        ? std::string(", or the path of a model file")
                        : ", or a model file in the model path (tried " + std::to_string(tried.size()) + " paths)"));
}

}  // namespace layerplan
