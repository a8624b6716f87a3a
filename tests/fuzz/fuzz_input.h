#pragma once
// Helpers shared by the fuzz targets in tests/fuzz/ (docs/testing.md).
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "common/error.h"

namespace layerplan::fuzz {

// Runs `parse`; the errors a reader is documented to throw for bad input are expected.
// Anything else (another exception, a crash, a sanitizer report) is a finding: libFuzzer
// reports an escaping exception as a crash (abort through std::terminate).
template <typename Parse>
void expect_clean_errors(Parse&& parse) {
  try {
    parse();
  } catch (const UsageError&) {
  }
}

// A file in memory (memfd) that readers which take a path and read by range open as
// /proc/self/fd/N; rewritten for every input, so no file is left behind.
class MemoryFile {
 public:
  explicit MemoryFile(const char* name) : fd_(memfd_create(name, MFD_CLOEXEC)) {
    if (fd_ < 0) std::abort();
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  ~MemoryFile() { close(fd_); }
  MemoryFile(const MemoryFile&) = delete;
  MemoryFile& operator=(const MemoryFile&) = delete;

  // Replaces the content with `size` bytes at `data`; returns the path to open.
  const std::string& hold(const uint8_t* data, size_t size) {
    if (ftruncate(fd_, 0) != 0) std::abort();
    size_t done = 0;
    while (done < size) {
      const ssize_t n = pwrite(fd_, data + done, size - done, static_cast<off_t>(done));
      if (n <= 0) std::abort();
      done += static_cast<size_t>(n);
    }
    return path_;
  }

 private:
  int fd_;
  std::string path_;
};

}  // namespace layerplan::fuzz
