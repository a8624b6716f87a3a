#include "cli/text_format.h"

#include <cstdarg>
#include <cstdio>
#include <vector>

namespace layerplan {

std::string format(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  va_list again;
  va_copy(again, args);
  const int size = std::vsnprintf(nullptr, 0, fmt, args);
  va_end(args);
  std::vector<char> buffer(static_cast<size_t>(size > 0 ? size : 0) + 1);
  std::vsnprintf(buffer.data(), buffer.size(), fmt, again);
  va_end(again);
  return std::string(buffer.data(), static_cast<size_t>(size > 0 ? size : 0));
}

}  // namespace layerplan
