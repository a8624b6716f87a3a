#pragma once
// Copies a rank's output to a file descriptor line by line, each line prefixed with the
// rank ("[rank 2] "), so that the lines of several ranks interleave but never mix.
#include <string>

namespace layerplan {

class LinePrefixer {
 public:
  LinePrefixer(std::string prefix, int fd) : prefix_(std::move(prefix)), fd_(fd) {}

  // Takes bytes as they arrive; writes every line they complete.
  void feed(const char* data, size_t size);
  // Writes a last line that has no newline yet, adding one.
  void finish();
  // The last non-blank line seen (without prefix or newline), "" if none.
  const std::string& last_line() const { return last_line_; }

 private:
  void emit(const std::string& line);

  std::string prefix_;
  int fd_;
  std::string partial_;
  std::string last_line_;
};

}  // namespace layerplan
