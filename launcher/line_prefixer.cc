#include "launcher/line_prefixer.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace layerplan {

LinePrefixer::LinePrefixer(std::string prefix, int fd, size_t max_piece)
    : prefix_(std::move(prefix)), fd_(fd), max_piece_(max_piece), pending_(prefix_) {
  if (max_piece_ == 0) throw std::invalid_argument("LinePrefixer: max_piece must be at least 1");
  pending_.reserve(prefix_.size() + max_piece_ + 1);
}

void LinePrefixer::feed(const char* data, size_t size) {
  while (size > 0) {
    const size_t room = prefix_.size() + max_piece_ - pending_.size();
    // One byte past the room: a newline right after a full piece ends that piece.
    const size_t look = std::min(size, room + 1);
    const auto* newline = static_cast<const char*>(std::memchr(data, '\n', look));
    const bool piece = !newline && look > room;  // a piece of a line longer than max_piece
    size_t take = size;
    if (newline) take = static_cast<size_t>(newline - data);
    if (piece) take = room;
    pending_.append(data, take);
    const size_t used = newline ? take + 1 : take;
    data += used;
    size -= used;
    if (newline || piece) emit();
  }
}

void LinePrefixer::finish() {
  if (pending_.size() > prefix_.size()) emit();
}

void LinePrefixer::emit() {
  const std::string_view line(pending_.data() + prefix_.size(), pending_.size() - prefix_.size());
  if (line.find_first_not_of(" \t\r") != std::string_view::npos) last_line_.assign(line);
  // One write per line keeps lines of different ranks whole.
  pending_ += '\n';
  size_t done = 0;
  while (done < pending_.size()) {
    const ssize_t n = ::write(fd_, pending_.data() + done, pending_.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // the reader went away; the ranks' fate matters more than their output
    done += static_cast<size_t>(n);
  }
  pending_.resize(prefix_.size());
}

}  // namespace layerplan
