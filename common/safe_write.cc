#include "common/safe_write.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "common/error.h"

namespace layerplan {
namespace {

// Leaves room for the random part within NAME_MAX (255 bytes).
constexpr size_t kMaxTempStem = 200;
// Another file at a random temporary name is someone guessing; a few tries outlast chance.
constexpr int kCreateTries = 4;

std::string errno_text() { return std::strerror(errno); }

// Why a file of this kind at the final name is refused; empty when it is not.
std::string refusal(const struct stat& st) {
  if (S_ISLNK(st.st_mode)) {
    return "is a symbolic link, which is neither written through nor replaced: remove it or name another file";
  }
  if (S_ISDIR(st.st_mode)) return "is a folder: expected the path of a file";
  return "";
}

// ".NAME.<16 hex>.tmp": hidden, next to the file, and unguessable.
std::string temp_name_for(const std::string& name) {
  const std::string stem = (name[0] == '.' ? name : "." + name).substr(0, kMaxTempStem);
  return stem + "." + random_hex() + ".tmp";
}

}  // namespace

NewFile::NewFile(const std::string& path, const std::string& what, mode_t mode) : path_(path), what_(what) {
  const size_t slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  name_ = slash == std::string::npos ? path : path.substr(slash + 1);
  if (name_.empty() || name_ == "." || name_ == "..") fail("expected the path of a file, not of a folder");
  own_dir_fd_ = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  // A folder we may write to but not list can still be used by name (its fsync is lost).
  if (own_dir_fd_ < 0 && errno == EACCES) own_dir_fd_ = ::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (own_dir_fd_ < 0) fail("cannot open the folder '" + dir + "': " + errno_text());
  dir_fd_ = own_dir_fd_;
  try {
    create(mode);
  } catch (...) {
    ::close(own_dir_fd_);
    throw;
  }
}

NewFile::NewFile(int dir_fd, const std::string& dir, const std::string& name, const std::string& what, mode_t mode)
    : dir_fd_(dir_fd), path_(dir.empty() ? name : dir + "/" + name), name_(name), what_(what) {
  if (name_.empty() || name_ == "." || name_ == ".." || name_.find('/') != std::string::npos) {
    fail("expected a file name");
  }
  create(mode);
}

NewFile::~NewFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!temp_.empty()) ::unlinkat(dir_fd_, temp_.c_str(), 0);
  if (own_dir_fd_ >= 0) ::close(own_dir_fd_);
}

void NewFile::create(mode_t mode) {
  refuse_symlink();  // before any work is written
  for (int attempt = 0; attempt < kCreateTries && fd_ < 0; ++attempt) {
    const std::string temp = temp_name_for(name_);
    fd_ = ::openat(dir_fd_, temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd_ >= 0) temp_ = temp;
    if (fd_ < 0 && errno != EEXIST) break;
  }
  if (fd_ < 0) fail("cannot create a file in its folder: " + errno_text());
}

void NewFile::write(std::string_view bytes) { write(bytes.data(), bytes.size()); }

void NewFile::write(const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::write(fd_, p + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("writing failed: " + (n < 0 ? errno_text() : std::string("no space left")));
    done += static_cast<size_t>(n);
  }
}

void NewFile::publish() {
  if (::fsync(fd_) != 0) fail("writing failed: " + errno_text());
  refuse_symlink();
  // Renaming replaces the name itself: were a link planted since the check, it is the link
  // that goes, never its target.
  if (::renameat(dir_fd_, temp_.c_str(), dir_fd_, name_.c_str()) != 0) fail("cannot replace it: " + errno_text());
  temp_.clear();
  published_ = true;
  ::fsync(dir_fd_);  // makes the rename durable; best effort (a folder opened O_PATH cannot)
}

bool NewFile::publish_if_absent() {
  if (::fsync(fd_) != 0) fail("writing failed: " + errno_text());
  if (::linkat(dir_fd_, temp_.c_str(), dir_fd_, name_.c_str(), 0) != 0) {
    if (errno == EEXIST) return false;
    fail("cannot create it: " + errno_text());
  }
  ::unlinkat(dir_fd_, temp_.c_str(), 0);
  temp_.clear();
  published_ = true;
  ::fsync(dir_fd_);
  return true;
}

void NewFile::refuse_symlink() const {
  struct stat st {};
  if (::fstatat(dir_fd_, name_.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return;
  if (const std::string why = refusal(st); !why.empty()) fail(why);
}

void NewFile::fail(const std::string& why) const { throw UsageError(what_ + " '" + path_ + "': " + why); }

void check_output_path(const std::string& path, const std::string& what) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return;
  if (const std::string why = refusal(st); !why.empty()) throw UsageError(what + " '" + path + "': " + why);
}

void write_file_safely(const std::string& path, std::string_view text, const std::string& what, mode_t mode) {
  NewFile file(path, what, mode);
  file.write(text);
  file.publish();
}

std::string random_hex() {
  uint64_t value = 0;
  size_t done = 0;
  while (done < sizeof value) {
    const ssize_t n = ::getrandom(reinterpret_cast<char*>(&value) + done, sizeof value - done, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw std::runtime_error("getrandom failed: " + errno_text());
    done += static_cast<size_t>(n);
  }
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
  return text;
}

}  // namespace layerplan
