#include "runtime/gpu/gpu_binding.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "common/error.h"

namespace layerplan {
namespace {

std::string trimmed(const std::string& s) {
  const auto begin = s.find_first_not_of(" \t");
  if (begin == std::string::npos) return "";
  return s.substr(begin, s.find_last_not_of(" \t") - begin + 1);
}

bool valid_entry(const std::string& e) {
  if (e.rfind("GPU-", 0) == 0 || e.rfind("MIG-", 0) == 0) return e.size() > 4;
  return !e.empty() && std::all_of(e.begin(), e.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
}

std::string ordinal(int k) {
  const int last = k % 10, tens = k % 100;
  const char* suffix = (tens >= 11 && tens <= 13) ? "th"
                       : last == 1                ? "st"
                       : last == 2                ? "nd"
                       : last == 3                ? "rd"
                                                  : "th";
  return std::to_string(k) + suffix;
}

}  // namespace

std::optional<std::vector<std::string>> visible_gpu_entries(const char* cuda_visible_devices) {
  if (cuda_visible_devices == nullptr) return std::nullopt;
  std::vector<std::string> entries;
  const std::string text = cuda_visible_devices;
  size_t begin = 0;
  while (begin <= text.size()) {
    const size_t end = std::min(text.find(',', begin), text.size());
    const std::string entry = trimmed(text.substr(begin, end - begin));
    if (!valid_entry(entry)) break;
    entries.push_back(entry);
    begin = end + 1;
  }
  return entries;
}

GpuBinding bind_local_rank(int local_rank, int visible, const char* cuda_visible_devices) {
  if (local_rank < visible) {
    const auto entries = visible_gpu_entries(cuda_visible_devices);
    const bool named = entries && local_rank < static_cast<int>(entries->size());
    return {local_rank, named ? (*entries)[static_cast<size_t>(local_rank)] : std::to_string(local_rank)};
  }
  std::string line = "rank " + std::to_string(local_rank) + " needs the " + ordinal(local_rank + 1) +
                     " visible GPU, found " + std::to_string(visible);
  if (cuda_visible_devices != nullptr) line += std::string("; CUDA_VISIBLE_DEVICES='") + cuda_visible_devices + "'";
  throw UsageError(line);
}

int local_rank_from_env() {
  for (const char* name : {"LAYERPLAN_LOCAL_RANK", "LOCAL_RANK", "SLURM_LOCALID"}) {
    const char* value = std::getenv(name);
    if (value == nullptr) continue;
    const std::string text = value;
    require(!text.empty() && text.size() < 7 &&
                std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c) != 0; }),
            std::string(name) + "='" + text + "': expected a local rank, 0 or more");
    return std::stoi(text);
  }
  return 0;
}

}  // namespace layerplan
