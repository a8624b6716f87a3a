#include "runtime/training/checkpoint_store.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <system_error>
#include <vector>

#include "common/error.h"
#include "common/safe_write.h"

namespace layerplan {
namespace {

namespace fs = std::filesystem;

const std::string kSuffix = ".safetensors";
const std::string kFolderPrefix = "step-";
constexpr size_t kStepDigits = 8;
const std::string kWeightsName = "model.safetensors";

std::string step_folder_name(int64_t step) {
  std::string digits = std::to_string(step);
  if (digits.size() < kStepDigits) digits.insert(0, kStepDigits - digits.size(), '0');
  return kFolderPrefix + digits;
}

// The step of a folder named step-NNNNNNNN (at least 8 digits), else nullopt.
std::optional<int64_t> step_of_folder(const std::string& name) {
  if (!name.starts_with(kFolderPrefix) || name.size() < kFolderPrefix.size() + kStepDigits) return std::nullopt;
  int64_t step = -1;
  const char* first = name.data() + kFolderPrefix.size();
  const char* last = name.data() + name.size();
  const auto [end, error] = std::from_chars(first, last, step);
  if (error != std::errc() || end != last || *first == '-') return std::nullopt;
  return step;
}

std::string step_text(const TrainingState& state) {
  const auto it = state.metadata.find("step");
  return it == state.metadata.end() ? "" : it->second;
}

// The whole checkpoints of `dir`, oldest first.
std::vector<SavedCheckpoint> checkpoints_in(const std::string& dir) {
  std::vector<SavedCheckpoint> found;
  std::error_code error;
  for (fs::directory_iterator it(dir, error), end; !error && it != end; it.increment(error)) {
    const std::optional<int64_t> step = step_of_folder(it->path().filename().string());
    if (!step || !it->is_directory(error)) continue;
    const fs::path weights = it->path() / kWeightsName;
    if (fs::is_regular_file(weights, error)) found.push_back({*step, it->path().string(), weights.string()});
  }
  std::sort(found.begin(), found.end(),
            [](const SavedCheckpoint& a, const SavedCheckpoint& b) { return a.step < b.step; });
  return found;
}

void remove_folder(const fs::path& folder, const std::string& what) {
  std::error_code error;
  fs::remove_all(folder, error);
  require(!error, what + ": cannot remove '" + folder.string() + "': " + error.message());
}

}  // namespace

std::string optimizer_state_path(const std::string& weights_path) {
  if (weights_path.ends_with(kSuffix) && weights_path.size() > kSuffix.size()) {
    return weights_path.substr(0, weights_path.size() - kSuffix.size()) + ".optimizer" + kSuffix;
  }
  return weights_path + ".optimizer" + kSuffix;
}

void write_checkpoint_files(const std::string& weights_path, const TrainingState& state, const std::string& what) {
  TrainingState weights, optimizer;
  weights.metadata = state.metadata;
  optimizer.metadata = state.metadata;
  optimizer.metadata["format"] = "layerplan-optimizer-state";
  weights.counters = state.counters;
  for (const auto& [name, array] : state.arrays) {
    (is_optimizer_state_name(name) ? optimizer : weights).arrays.emplace(name, array);
  }
  // The optimizer state first: a crash between the two leaves new momentum beside old
  // weights, which read_checkpoint_files refuses by their step counts.
  write_checkpoint(optimizer_state_path(weights_path), optimizer, what);
  write_checkpoint(weights_path, weights, what);
}

TrainingState read_checkpoint_files(const std::string& weights_path) {
  TrainingState state = read_checkpoint(weights_path);
  const std::string optimizer_path = optimizer_state_path(weights_path);
  std::error_code error;
  if (!fs::exists(optimizer_path, error)) return state;
  TrainingState optimizer = read_checkpoint(optimizer_path);
  require(step_text(optimizer) == step_text(state),
          "checkpoint '" + weights_path + "' is at step '" + step_text(state) + "' but its optimizer state '" +
              optimizer_path + "' at step '" + step_text(optimizer) + "': expected the files of one save");
  for (auto& [name, array] : optimizer.arrays) {
    if (is_optimizer_state_name(name)) state.arrays[name] = std::move(array);
  }
  return state;
}

SavedCheckpoint save_checkpoint_to_folder(const std::string& dir, const TrainingState& state, int keep) {
  const std::string what = "--save-dir '" + dir + "'";
  require(keep >= 1, "--keep " + std::to_string(keep) + ": expected 1 or more");
  const std::string step_value = step_text(state);
  int64_t step = -1;
  const auto [end, error] = std::from_chars(step_value.data(), step_value.data() + step_value.size(), step);
  require(error == std::errc() && end == step_value.data() + step_value.size() && step >= 0,
          what + ": a checkpoint without a step count cannot be saved there");
  std::error_code fs_error;
  fs::create_directories(dir, fs_error);
  require(!fs_error, what + ": cannot make the folder: " + fs_error.message());

  // Written under a hidden name, then renamed: a folder named step-N is always whole.
  const fs::path final_folder = fs::path(dir) / step_folder_name(step);
  const fs::path partial = fs::path(dir) / ("." + step_folder_name(step) + ".partial-" + random_hex());
  fs::create_directory(partial, fs_error);
  require(!fs_error, what + ": cannot make '" + partial.string() + "': " + fs_error.message());
  try {
    write_checkpoint_files((partial / kWeightsName).string(), state, what);
  } catch (...) {
    fs::remove_all(partial, fs_error);
    throw;
  }
  if (fs::exists(final_folder, fs_error)) remove_folder(final_folder, what);  // the same step saved again
  fs::rename(partial, final_folder, fs_error);
  require(!fs_error, what + ": cannot rename '" + partial.string() + "' to '" + final_folder.string() +
                         "': " + fs_error.message());

  const std::vector<SavedCheckpoint> all = checkpoints_in(dir);
  const size_t surplus = all.size() > static_cast<size_t>(keep) ? all.size() - static_cast<size_t>(keep) : 0;
  for (size_t i = 0; i < surplus; ++i) remove_folder(all[i].folder, what);
  return {step, final_folder.string(), (final_folder / kWeightsName).string()};
}

std::optional<SavedCheckpoint> newest_checkpoint(const std::string& dir) {
  const std::vector<SavedCheckpoint> all = checkpoints_in(dir);
  if (all.empty()) return std::nullopt;
  return all.back();
}

}  // namespace layerplan
