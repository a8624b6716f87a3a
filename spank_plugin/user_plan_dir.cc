#include "spank_plugin/user_plan_dir.h"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "common/error.h"

namespace layerplan::spank {

namespace {

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

std::string errno_text() { return std::strerror(errno); }

// The folder the admin named must not let users replace each other's folders.
int open_plan_dir(const std::string& plan_dir) {
  const int fd = ::open(plan_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  require(fd >= 0, "plan_dir '" + plan_dir + "' cannot be opened: " + errno_text());
  struct stat st {};
  if (::fstat(fd, &st) != 0 || ((st.st_mode & S_IWOTH) != 0 && (st.st_mode & S_ISVTX) == 0)) {
    ::close(fd);
    throw UsageError("plan_dir '" + plan_dir +
                     "' is writable by everyone and has no sticky bit: expected root's folder (0755) or one "
                     "with the sticky bit (1777)");
  }
  return fd;
}

}  // namespace

std::string user_dir_name(uid_t uid) {
  std::vector<char> buf(16384);
  struct passwd pw {};
  struct passwd* found = nullptr;
  if (::getpwuid_r(uid, &pw, buf.data(), buf.size(), &found) == 0 && found != nullptr && found->pw_name != nullptr) {
    std::string name = found->pw_name;
    if (!name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos) return name;
  }
  return std::to_string(uid);
}

std::string prepare_user_plan_dir(const std::string& plan_dir, const std::string& dir_name, uid_t uid, gid_t gid) {
  require(!dir_name.empty() && dir_name != "." && dir_name != ".." && dir_name.find('/') == std::string::npos,
          "per-user plan folder name '" + dir_name + "': expected a user name");
  std::string path = plan_dir + "/" + dir_name;
  Fd parent{open_plan_dir(plan_dir)};
  const bool created = ::mkdirat(parent.fd, dir_name.c_str(), 0700) == 0;
  require(created || errno == EEXIST, "cannot create the plan folder '" + path + "': " + errno_text());
  // O_NOFOLLOW: a symlink planted in a sticky plan_dir is refused, never followed.
  Fd dir{::openat(parent.fd, dir_name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)};
  require(dir.fd >= 0, "the plan folder '" + path + "' cannot be opened (" + errno_text() +
                           "): expected a directory of the job's user, not a symlink");
  struct stat st {};
  require(::fstat(dir.fd, &st) == 0, "cannot stat the plan folder '" + path + "': " + errno_text());
  if (created) {
    // Ours since mkdirat: in a sticky or root-only plan_dir nobody else can rename it.
    require(::fchown(dir.fd, uid, gid) == 0 && ::fchmod(dir.fd, 0700) == 0,
            "cannot hand the plan folder '" + path + "' to uid " + std::to_string(uid) + ": " + errno_text());
    return path;
  }
  require(st.st_uid == uid, "the plan folder '" + path + "' belongs to uid " + std::to_string(st.st_uid) +
                                ", not to the job's user (uid " + std::to_string(uid) + "): remove it");
  require((st.st_mode & (S_IWGRP | S_IWOTH)) == 0,
          "the plan folder '" + path + "' is writable by others: expected mode 0700");
  return path;
}

}  // namespace layerplan::spank
