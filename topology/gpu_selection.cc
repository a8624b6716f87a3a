// select_gpus() and GpuEnvironment: which of the node's GPUs a job was given.
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "common/error.h"
#include "common/text.h"
#include "topology/discovery.h"

namespace layerplan {

namespace {

std::string trim(const std::string& text) {
  const size_t first = text.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  const size_t last = text.find_last_not_of(" \t");
  return text.substr(first, last - first + 1);
}

std::vector<std::string> trimmed_entries(const std::string& text) {
  std::vector<std::string> parts = split_commas(text);
  for (std::string& part : parts) part = trim(part);
  return parts;
}

bool all_digits(const std::string& text) {
  return !text.empty() && text.size() <= 9 &&
         std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
}

bool starts_with_ignoring_case(const std::string& text, const std::string& prefix) {
  if (text.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(text[i])) != std::tolower(static_cast<unsigned char>(prefix[i]))) {
      return false;
    }
  }
  return true;
}

// Builds the messages for one variable and keeps the chosen positions unique.
class Selection {
 public:
  Selection(const NodeTopology& topology, std::string variable, std::string value)
      : topology_(topology), variable_(std::move(variable)), value_(std::move(value)) {}

  [[noreturn]] void fail(const std::string& what) const { throw UsageError(variable_ + "='" + value_ + "': " + what); }

  std::string node_gpus() const {
    const int n = topology_.gpu_count();
    if (n == 0) return "this node has no NVIDIA GPU";
    return "this node has " + std::to_string(n) + " GPU" + (n == 1 ? "" : "s") + " (indices 0-" +
           std::to_string(n - 1) + " in PCI bus-id order)";
  }

  void add_index(int index) {
    if (index >= topology_.gpu_count()) fail("GPU " + std::to_string(index) + " is not present: " + node_gpus());
    add(index, "GPU " + std::to_string(index));
  }

  void add(int position, const std::string& name) {
    if (std::find(chosen_.begin(), chosen_.end(), position) != chosen_.end()) {
      fail(name + " is listed twice (expected each GPU once)");
    }
    chosen_.push_back(position);
  }

  std::vector<int> chosen() const { return chosen_; }

 private:
  const NodeTopology& topology_;
  std::string variable_;
  std::string value_;
  std::vector<int> chosen_;
};

int parse_index(Selection& selection, const std::string& text, const std::string& expected) {
  if (!all_digits(text)) selection.fail("'" + text + "' is not a GPU index (expected " + expected + ")");
  return std::atoi(text.c_str());
}

// SLURM_STEP_GPUS / SLURM_JOB_GPUS: global indices and ranges, "0,2", "0-3", "0-1,3".
std::vector<int> parse_slurm_list(const NodeTopology& topology, const std::string& variable, const std::string& value) {
  Selection selection(topology, variable, value);
  const std::string expected = "indices and ranges such as 0,2 or 0-3";
  for (const std::string& item : trimmed_entries(value)) {
    if (item.empty()) selection.fail("empty entry (expected " + expected + ")");
    const size_t dash = item.find('-');
    if (dash == std::string::npos) {
      selection.add_index(parse_index(selection, item, expected));
      continue;
    }
    const int first = parse_index(selection, trim(item.substr(0, dash)), expected);
    const int last = parse_index(selection, trim(item.substr(dash + 1)), expected);
    if (last < first) selection.fail("range '" + item + "' runs backwards (expected first-last with first <= last)");
    for (int i = first; i <= last; ++i) selection.add_index(i);
  }
  return selection.chosen();
}

// The GPU whose UUID starts with `prefix` ("GPU-" included), as CUDA accepts unique prefixes.
int gpu_by_uuid(const NodeTopology& topology, Selection& selection, const std::string& prefix) {
  const bool any_uuid =
      std::any_of(topology.gpus.begin(), topology.gpus.end(), [](const GpuInfo& gpu) { return !gpu.uuid.empty(); });
  if (!any_uuid) {
    selection.fail("'" + prefix + "' names a GPU by UUID, but the topology has no GPU UUIDs (they come from NVML " +
                   "devices); use indices instead");
  }
  int found = -1;
  int matches = 0;
  for (int i = 0; i < topology.gpu_count(); ++i) {
    if (starts_with_ignoring_case(topology.gpus[static_cast<size_t>(i)].uuid, prefix)) {
      found = i;
      ++matches;
    }
  }
  if (matches == 0) selection.fail("no GPU with UUID " + prefix + "... is present: " + selection.node_gpus());
  if (matches > 1) {
    selection.fail("'" + prefix + "' matches " + std::to_string(matches) +
                   " GPUs' UUIDs (expected a prefix that names one GPU)");
  }
  return found;
}

std::vector<int> parse_cuda_visible_devices(const NodeTopology& topology, const std::string& value) {
  Selection selection(topology, "CUDA_VISIBLE_DEVICES", value);
  if (trim(value).empty()) selection.fail("no GPU is visible (the variable is set but empty)");
  const std::string expected = "GPU indices or GPU-<uuid>";
  for (const std::string& item : trimmed_entries(value)) {
    if (item.empty()) selection.fail("empty entry (expected " + expected + ")");
    if (starts_with_ignoring_case(item, "MIG-")) {
      selection.fail("MIG instances are not supported ('" + item + "'): layerplan plans whole GPUs; name GPUs by " +
                     "index or GPU-<uuid>");
    }
    if (starts_with_ignoring_case(item, "GPU-")) {
      selection.add(gpu_by_uuid(topology, selection, item), item);
      continue;
    }
    selection.add_index(parse_index(selection, item, expected));
  }
  return selection.chosen();
}

}  // namespace

GpuEnvironment GpuEnvironment::from_process() {
  GpuEnvironment env;
  if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES")) {
    env.cuda_visible_devices = v;
    env.cuda_visible_devices_set = true;
  }
  if (const char* v = std::getenv("SLURM_STEP_GPUS")) env.slurm_step_gpus = v;
  if (const char* v = std::getenv("SLURM_JOB_GPUS")) env.slurm_job_gpus = v;
  return env;
}

std::vector<int> select_gpus(const NodeTopology& topology, const GpuEnvironment& env) {
  if (!trim(env.slurm_step_gpus).empty()) return parse_slurm_list(topology, "SLURM_STEP_GPUS", env.slurm_step_gpus);
  if (!trim(env.slurm_job_gpus).empty()) return parse_slurm_list(topology, "SLURM_JOB_GPUS", env.slurm_job_gpus);
  if (env.cuda_visible_devices_set || !env.cuda_visible_devices.empty()) {
    return parse_cuda_visible_devices(topology, env.cuda_visible_devices);
  }
  std::vector<int> all(static_cast<size_t>(topology.gpu_count()));
  for (int i = 0; i < topology.gpu_count(); ++i) all[static_cast<size_t>(i)] = i;
  return all;
}

std::vector<int> check_gpu_indices(const NodeTopology& topology, const std::vector<int>& indices) {
  std::string listed;
  for (int i : indices) listed += (listed.empty() ? "" : ",") + std::to_string(i);
  Selection selection(topology, "--gpus", listed);
  for (int i : indices) {
    if (i < 0) selection.fail("GPU " + std::to_string(i) + " is not a GPU index (expected 0 or more)");
    selection.add_index(i);
  }
  return selection.chosen();
}

}  // namespace layerplan
