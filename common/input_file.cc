#include "common/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/error.h"

namespace layerplan {

namespace {

// What a file that is not a regular file is, for the message that refuses it.
const char* file_type_name(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a plain file";
}

std::string too_large(const std::string& label, int64_t max_bytes) {
  return label + " is larger than " + byte_limit_text(max_bytes) + ", the most this kind of file may have";
}

}  // namespace

std::string byte_limit_text(int64_t bytes) {
  if (bytes > 0 && bytes % (int64_t{1} << 30) == 0) return std::to_string(bytes >> 30) + " GiB";
  if (bytes > 0 && bytes % (int64_t{1} << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  return std::to_string(bytes) + " bytes";
}

InputFile::InputFile(const std::string& path, std::string label, int64_t max_bytes)
    : max_bytes_(max_bytes), label_(std::move(label)) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd_ < 0) throw UsageError(label_ + " cannot be read: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    const int error = errno;
    ::close(fd_);
    throw UsageError(label_ + " cannot be read: " + std::strerror(error));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd_);
    throw UsageError(label_ + " is " + file_type_name(st.st_mode) + ", not a regular file");
  }
  size_ = st.st_size;
  if (size_ > max_bytes_) {
    ::close(fd_);
    throw UsageError(too_large(label_, max_bytes_));
  }
  // Reads of a regular file never block; the flag only mattered for the open.
  ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) & ~O_NONBLOCK);
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

int InputFile::release() {
  const int fd = fd_;
  fd_ = -1;
  return fd;
}

std::string InputFile::read_all() const {
  // One byte more than allowed tells a file that grew past the cap since fstat.
  const auto capacity = static_cast<size_t>(max_bytes_) + 1;
  std::string text(std::min(static_cast<size_t>(size_) + 1, capacity), '\0');
  size_t done = 0;
  while (true) {
    if (done == text.size()) {
      if (text.size() >= capacity) throw UsageError(too_large(label_, max_bytes_));
      text.resize(std::min(text.size() * 2, capacity));
    }
    const ssize_t n = ::pread(fd_, text.data() + done, text.size() - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw UsageError(label_ + " cannot be read: " + std::strerror(errno));
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  text.resize(done);
  return text;
}

std::string read_input_file(const std::string& path, const std::string& label, int64_t max_bytes) {
  return InputFile(path, label, max_bytes).read_all();
}

bool json_nests_deeper_than(std::string_view text, int max_depth) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped character, a quote included
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return true;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return false;
}

void check_json_depth(std::string_view text, const std::string& label, int max_depth) {
  require(!json_nests_deeper_than(text, max_depth),
          label + ": JSON nested deeper than " + std::to_string(max_depth) + " arrays and objects, the limit");
}

}  // namespace layerplan
