#include "common/async_safe_write.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace layerplan {

void write_async_safe(int fd, const char* text) {
  size_t left = std::strlen(text);
  while (left > 0) {
    const ssize_t n = ::write(fd, text, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    text += n;
    left -= static_cast<size_t>(n);
  }
}

}  // namespace layerplan
