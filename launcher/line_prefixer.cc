#include "launcher/line_prefixer.h"

#include <unistd.h>

#include <cerrno>

namespace layerplan {

void LinePrefixer::feed(const char* data, size_t size) {
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == '\n') {
      emit(partial_);
      partial_.clear();
    } else {
      partial_ += data[i];
    }
  }
}

void LinePrefixer::finish() {
  if (!partial_.empty()) emit(partial_);
  partial_.clear();
}

void LinePrefixer::emit(const std::string& line) {
  if (line.find_first_not_of(" \t\r") != std::string::npos) last_line_ = line;
  // One write per line keeps lines of different ranks whole.
  const std::string text = prefix_ + line + "\n";
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the reader went away; the ranks' fate matters more than their output
    done += static_cast<size_t>(n);
  }
}

}  // namespace layerplan
