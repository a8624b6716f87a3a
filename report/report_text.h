#pragma once
// The short texts the report's pictures and tables share: times, device lists, labels.
#include <cstddef>
#include <string>
#include <vector>

namespace layerplan::report {

std::string milliseconds(double seconds);                              // "12.345"
std::string device_list(const std::vector<int>& devices);              // "0,1,2,3", in tile order
std::string gpu_ranges(const std::vector<int>& devices);               // "gpus 0-3,8", ascending
std::string clipped_label(const std::string& text, size_t max_chars);  // at most max_chars bytes, "..." when cut
std::string megabytes(double bytes);                                   // "1.5"

}  // namespace layerplan::report
