#include "spank_plugin/job_options.h"

#include <cerrno>
#include <cstdlib>

#include "common/error.h"

namespace layerplan::spank {

namespace {

constexpr size_t kMaxValueLength = 4096;  // PATH_MAX: longer values are certainly mistakes

std::string checked_text(const char* value, const std::string& option, const std::string& expected) {
  require(value != nullptr && *value != '\0', option + " needs a value: expected " + expected);
  std::string text(value);
  require(text.size() <= kMaxValueLength, option + " value of " + std::to_string(text.size()) +
                                              " characters: expected at most " + std::to_string(kMaxValueLength));
  return text;
}

bool is_mode_name(const std::string& text) {
  return text == "auto" || text == "layerwise" || text == "data" || text == "model" || text == "owt" || text == "off";
}

int64_t parse_batch(const std::string& text, const std::string& option) {
  const std::string expected =
      option + " '" + text + "': expected a whole number of images from 1 to " + std::to_string(kMaxBatch);
  errno = 0;
  char* end = nullptr;
  const long long number = std::strtoll(text.c_str(), &end, 10);
  require(end != text.c_str() && *end == '\0' && errno == 0 && text.find_first_of(" \t+") == std::string::npos,
          expected);
  require(number >= 1 && number <= kMaxBatch, expected);
  return number;
}

}  // namespace

bool looks_like_plan_file(const std::string& value) {
  return value.find('/') != std::string::npos || value.ends_with(".json");
}

void set_job_option(JobOptions& options, OptionId id, const char* value) {
  switch (id) {
    case OptionId::kMode: {
      const std::string expected = "auto, layerwise, data, model, owt, off or the path of a plan file";
      const std::string text = checked_text(value, "--layerplan", expected);
      if (is_mode_name(text)) {
        options.mode = text;
        options.plan_file.reset();
      } else if (looks_like_plan_file(text)) {
        options.plan_file = text;
        options.mode.reset();
      } else {
        throw UsageError("--layerplan '" + text + "': expected " + expected);
      }
      return;
    }
    case OptionId::kModel:
      options.model = checked_text(value, "--layerplan-model", "a zoo model name or a model file");
      return;
    case OptionId::kBatch:
      options.batch =
          parse_batch(checked_text(value, "--layerplan-batch", "a whole number, 1 or more"), "--layerplan-batch");
      options.batch_per_gpu.reset();
      return;
    case OptionId::kBatchPerGpu:
      options.batch_per_gpu = parse_batch(checked_text(value, "--layerplan-batch-per-gpu", "a whole number, 1 or more"),
                                          "--layerplan-batch-per-gpu");
      options.batch.reset();
      return;
    case OptionId::kExplain:
      options.explain = true;
      return;
  }
  throw std::logic_error("unknown layerplan option id " + std::to_string(static_cast<int>(id)));
}

}  // namespace layerplan::spank
