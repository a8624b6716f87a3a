#include "report/report_text.h"

#include <algorithm>
#include <cstdio>

#include "common/text.h"

namespace layerplan::report {

std::string milliseconds(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", seconds * 1e3);
  return text;
}

std::string megabytes(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", bytes / 1e6);
  return text;
}

std::string device_list(const std::vector<int>& devices) {
  std::string out;
  for (const int d : devices) {
    if (!out.empty()) out += ',';
    out += std::to_string(d);
  }
  return out;
}

std::string gpu_ranges(const std::vector<int>& devices) {
  std::vector<int> sorted = devices;
  std::sort(sorted.begin(), sorted.end());
  std::string out = sorted.size() == 1 ? "gpu " : "gpus ";
  for (size_t i = 0; i < sorted.size();) {
    size_t j = i;
    while (j + 1 < sorted.size() && sorted[j + 1] == sorted[j] + 1) ++j;
    if (i > 0) out += ',';
    out += std::to_string(sorted[i]);
    if (j > i) out += "-" + std::to_string(sorted[j]);
    i = j + 1;
  }
  return out;
}

std::string clipped_label(const std::string& text, size_t max_chars) { return clipped(text, max_chars); }

}  // namespace layerplan::report
