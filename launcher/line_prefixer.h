#pragma once
// Copies a rank's output to a file descriptor line by line, each line prefixed with the
// rank ("[rank 2] "), so that the lines of several ranks interleave but never mix.
//
// A line longer than `max_piece` bytes is written in pieces of `max_piece` bytes, each
// prefixed and ended with a newline as if it were a line of its own: the launcher holds at
// most one piece per pipe, however much a rank writes without a newline.
#include <cstddef>
#include <string>

namespace layerplan {

class LinePrefixer {
 public:
  static constexpr size_t kDefaultMaxPiece = size_t{64} * 1024;

  LinePrefixer(std::string prefix, int fd, size_t max_piece = kDefaultMaxPiece);

  // Takes bytes as they arrive; writes every line (or piece of a long line) they complete.
  void feed(const char* data, size_t size);
  // Writes a last line that has no newline yet, adding one.
  void finish();
  // The last non-blank line (or piece) seen, without prefix or newline; "" if none.
  const std::string& last_line() const { return last_line_; }

 private:
  void emit();

  std::string prefix_;
  int fd_;
  size_t max_piece_;
  std::string pending_;  // the prefix, then the line's bytes so far
  std::string last_line_;
};

}  // namespace layerplan
