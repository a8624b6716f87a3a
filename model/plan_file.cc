#include "model/plan_file.h"

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <vector>

#include "common/error.h"
#include "common/index.h"
#include "common/input_file.h"
#include "common/limits.h"
#include "common/text.h"
#include "model/content_hash.h"
#include "model/json_input.h"
#include "model/layer_math.h"
#include "model/plan_model.h"

namespace layerplan {

using nlohmann::json;

namespace {

// `object[key]`, or nullptr when `object` is not an object or has no such key.
const json* find_field(const json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  const auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

// `object[key]`; UsageError "WHERE: missing NAME" when absent.
const json& need_field(const json& object, const char* key, const std::string& where, const std::string& name) {
  const json* v = find_field(object, key);
  require(v != nullptr, where + ": missing " + name);
  return *v;
}

// Throws unless `doc` is a plan of this format and version.
void require_plan_format(const json& doc, const std::string& label) {
  const json* format = find_field(doc, "format");
  require(format != nullptr && format->is_string() && format->get_ref<const std::string&>() == kPlanFormatName,
          label + " is not a layerplan plan file (" +
              (doc.is_object() ? "format " + (format ? describe_json(*format) : std::string("missing"))
                               : "not a JSON object") +
              ", expected \"" + kPlanFormatName + "\"; docs/plan-format.md)");
}

void read_cluster_header(const json& cluster, const std::string& label, PlanHeader& header) {
  require(cluster.is_object(), label + ": cluster " + describe_json(cluster) + ": expected an object");
  if (const json* v = find_field(cluster, "devices")) {
    header.devices = static_cast<int>(json_integer(*v, label, "cluster.devices", 1, kMaxDevices));
  }
  if (const json* v = find_field(cluster, "nodes")) {
    header.nodes = static_cast<int>(json_integer(*v, label, "cluster.nodes", 1, kMaxDevices));
  }
  if (const json* v = find_field(cluster, "gpus_per_node")) {
    header.gpus_per_node = static_cast<int>(json_integer(*v, label, "cluster.gpus_per_node", 1, kMaxDevices));
  }
  if (const json* v = find_field(cluster, "gpu")) header.gpu = json_string(*v, label, "cluster.gpu");
}

// A SHA-256 field, as sha256_hex() writes it.
std::string sha256_field(const json& value, const std::string& label, const std::string& name) {
  const std::string text = json_string(value, label, name);
  require(is_sha256_hex(text),
          label + ": " + name + " " + describe_json(value) + ": expected 64 hex digits, a SHA-256");
  return ascii_lower(text);
}

// model_file (null: a built-in model) and model_graph_sha256.
RecordedModel read_recorded_model(const json& doc, const std::string& label) {
  RecordedModel out;
  if (const json* v = find_field(doc, "model_graph_sha256")) {
    out.graph_sha256 = sha256_field(*v, label, "model_graph_sha256");
  }
  const json* file = find_field(doc, "model_file");
  if (file == nullptr) return out;
  out.has_file_field = true;
  if (file->is_null()) return out;
  require(file->is_object(), label + ": model_file " + describe_json(*file) + ": expected an object or null");
  ModelFileOrigin origin;
  origin.path = json_string(need_field(*file, "path", label, "model_file.path"), label, "model_file.path");
  require(origin.path.starts_with("/"),
          label + ": model_file.path " + describe_json((*file)["path"]) + ": expected an absolute path");
  origin.size = json_integer(need_field(*file, "size_bytes", label, "model_file.size_bytes"), label,
                             "model_file.size_bytes", 0, std::numeric_limits<int64_t>::max());
  origin.sha256 = sha256_field(need_field(*file, "sha256", label, "model_file.sha256"), label, "model_file.sha256");
  out.file = std::move(origin);
  return out;
}

// The degrees of a plan layer: each in range, a valid split of its extent, and their
// product at most the device count (checked in 64 bits before anything multiplies them).
Degrees read_degrees(const json& entry, const Layer& l, int device_count, const std::string& where) {
  const json& degrees = need_field(entry, "degrees", where, "degrees");
  const auto splittable = splittable_dims(l.kind);
  Degrees out;
  for (int dim = 0; dim < kNumDims; ++dim) {
    const auto d = static_cast<size_t>(dim);
    const std::string letter(1, kDimLetters[d]);
    const auto degree = static_cast<int>(json_integer(need_field(degrees, letter.c_str(), where, "degrees." + letter),
                                                      where, "degrees." + letter, 1, kMaxDevices));
    require((degree == 1 || splittable[d]) && l.output[dim] % degree == 0,
            where + ": degree " + std::to_string(degree) + " along " + letter + " is not a valid split of extent " +
                std::to_string(l.output[dim]));
    out.d[d] = degree;
  }
  require(product_within({out[0], out[1], out[2], out[3]}, device_count).has_value(),
          where + ": degrees " + std::to_string(out[0]) + "x" + std::to_string(out[1]) + "x" + std::to_string(out[2]) +
              "x" + std::to_string(out[3]) + " make more tiles than the " + std::to_string(device_count) + " devices");
  return out;
}

Configuration read_configuration(const json& entry, const Layer& l, int device_count) {
  const std::string where = "plan layer " + clipped(l.name);
  require(entry.is_object(), where + ": " + describe_json(entry) + ": expected an object");
  const std::string name = json_string(need_field(entry, "name", where, "name"), where, "name");
  require(name == l.name,
          "plan layer " + std::to_string(l.id) + " is '" + clipped(name) + "', expected '" + clipped(l.name) + "'");
  const std::string kind = json_string(need_field(entry, "kind", where, "kind"), where, "kind");
  require(
      kind == kind_name(l.kind) && need_field(entry, "output_shape", where, "output_shape") == json(l.output.extent),
      where + " is a " + clipped(kind) + " of another shape, expected " + std::string(kind_name(l.kind)) + " " +
          l.output.str());
  Configuration c;
  c.degrees = read_degrees(entry, l, device_count, where);
  const json& devices = need_field(entry, "devices", where, "devices");
  require(devices.is_array() && devices.size() == static_cast<size_t>(c.degrees.product()),
          where + ": devices " + describe_json(devices) + ": needs " + std::to_string(c.degrees.product()) +
              " distinct devices below " + std::to_string(device_count));
  for (const json& d : devices) {
    c.devices.push_back(static_cast<int>(json_integer(d, where, "device", 0, device_count - 1)));
  }
  const std::set<int> distinct(c.devices.begin(), c.devices.end());
  require(distinct.size() == c.devices.size(), where + ": needs " + std::to_string(c.degrees.product()) +
                                                   " distinct devices below " + std::to_string(device_count));
  return c;
}

// "alice (uid 1001)", or "uid 1001" for a uid without a name.
std::string user_name(uid_t uid) {
  struct passwd entry {};
  struct passwd* found = nullptr;
  std::vector<char> buffer(16384);
  std::string id = "uid " + std::to_string(uid);
  if (::getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found) != 0 || found == nullptr) return id;
  return clipped(found->pw_name) + " (" + id + ")";
}

// Refuses a plan file that neither the user nor root owns, naming its owner.
void require_owned_by_user_or_root(const InputFile& in) {
  struct stat st {};
  require(::fstat(in.fd(), &st) == 0, in.label() + " cannot be read: " + std::strerror(errno));
  const uid_t me = ::geteuid();
  require(st.st_uid == me || st.st_uid == 0,
          in.label() + " belongs to " + user_name(st.st_uid) + ", not to you (" + user_name(me) +
              ") or root: another user could have written any plan into it; copy it to a file of yours");
}

// Refuses plan text whose SHA-256 is not the one $LAYERPLAN_PLAN_SHA256 says, when set.
void require_published_plan(const std::string& text, const std::string& label) {
  const char* expected = std::getenv(kPlanSha256Variable);
  if (expected == nullptr) return;
  const std::string want = ascii_lower(expected);
  require(is_sha256_hex(want), std::string(kPlanSha256Variable) + " '" + clipped(expected) +
                                   "': expected 64 hex digits, the SHA-256 of the plan file");
  const std::string have = sha256_hex(text);
  require(have == want, label + " is not the plan the Slurm plugin published for this step: its SHA-256 is " +
                            have.substr(0, 16) + "..., " + kPlanSha256Variable + " says " + want.substr(0, 16) +
                            "... (the file was changed or replaced after planning)");
}

}  // namespace

std::string read_plan_text(const std::string& path, const std::string& label) {
  return read_input_file(path, label, kMaxPlanFileBytes);
}

PlanHeader read_plan_header(const std::string& text, const std::string& label) {
  const json doc = parse_json_input(text, label);
  require_plan_format(doc, label);
  PlanHeader header;
  if (const json* v = find_field(doc, "model")) header.model = json_string(*v, label, "model");
  header.recorded = read_recorded_model(doc, label);
  if (const json* v = find_field(doc, "batch")) header.batch = json_integer(*v, label, "batch", 1, kMaxBatch);
  if (const json* v = find_field(doc, "cluster")) read_cluster_header(*v, label, header);
  if (const json* v = find_field(doc, "strategy")) header.strategy = json_string(*v, label, "strategy");
  const json* predicted = find_field(doc, "predicted");
  if (const json* v = predicted ? find_field(*predicted, "step_s") : nullptr; v && !v->is_null()) {
    header.predicted_step_s = json_number(*v, label, "predicted.step_s");
  }
  return header;
}

std::vector<Configuration> configurations_from_json(const std::string& text, const ModelGraph& graph,
                                                    int device_count) {
  const std::string where = "plan file";
  const json doc = parse_json_input(text, where);
  require_plan_format(doc, where);
  const int64_t version =
      json_integer(need_field(doc, "version", where, "version"), where, "version", 0, kMaxModelField);
  require(version == kPlanFormatVersion,
          "plan format version " + std::to_string(version) + ": expected " + std::to_string(kPlanFormatVersion));
  const std::string model = json_string(need_field(doc, "model", where, "model"), where, "model");
  require(model == graph.name(), "plan is for model '" + clipped(model) + "', expected '" + graph.name() + "'");
  const int64_t batch = json_integer(need_field(doc, "batch", where, "batch"), where, "batch", 1, kMaxBatch);
  require(batch == graph.layer(0).output.n(),
          "plan is for batch " + std::to_string(batch) + ", expected " + std::to_string(graph.layer(0).output.n()));
  const json& cluster = need_field(doc, "cluster", where, "cluster");
  const int64_t devices =
      json_integer(need_field(cluster, "devices", where, "cluster.devices"), where, "cluster.devices", 1, kMaxDevices);
  require(devices == device_count,
          "plan is for " + std::to_string(devices) + " GPUs, expected " + std::to_string(device_count));
  const json& layers = need_field(doc, "layers", where, "layers");
  require(layers.is_array() && layers.size() == static_cast<size_t>(graph.size()),
          "plan has " + (layers.is_array() ? std::to_string(layers.size()) + " layers" : describe_json(layers)) +
              ", model has " + std::to_string(graph.size()));
  std::vector<Configuration> out;
  out.reserve(layers.size());
  for (const Layer& l : graph.layers())
    out.push_back(read_configuration(layers[static_cast<size_t>(l.id)], l, device_count));
  return out;
}

PlanFile read_plan_file(const std::optional<std::string>& path, PlanOwner owner) {
  const char* env_plan = std::getenv("LAYERPLAN_PLAN");
  PlanFile file;
  file.path = path.value_or(env_plan ? env_plan : "");
  require(!file.path.empty(), "no plan: give --plan FILE or set LAYERPLAN_PLAN");
  const std::string label = "plan file '" + file.path + "'";
  {
    // One open: the owner, the hash and the parse are all of this file's bytes.
    const InputFile in(file.path, label, kMaxPlanFileBytes);
    if (owner == PlanOwner::kUserOrRoot) require_owned_by_user_or_root(in);
    file.text = in.read_all();
  }
  if (env_plan != nullptr && file.path == env_plan) require_published_plan(file.text, label);
  const PlanHeader header = read_plan_header(file.text, label);
  require(header.batch >= 1 && header.devices >= 1, label + " names no batch or device count");
  file.batch = header.batch;
  file.devices = header.devices;
  file.model = header.model;
  file.recorded = header.recorded;
  file.strategy = header.strategy.empty() ? "?" : header.strategy;
  return file;
}

ModelAndPlan model_and_plan(const PlanFile& file, const std::optional<std::string>& model,
                            const std::vector<std::string>& model_path) {
  PlanHeader header;
  header.model = file.model;
  header.recorded = file.recorded;
  ModelGraph graph = plan_model(file.path, header, model, model_path, file.batch);
  std::vector<Configuration> plan = configurations_from_json(file.text, graph, file.devices);
  return {std::move(graph), std::move(plan)};
}

}  // namespace layerplan
