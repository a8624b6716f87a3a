#include "launcher/rank_group.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <csignal>
#include <cstring>
#include <ctime>
#include <stdexcept>
#include <string>

namespace layerplan {
namespace {

// Gloo's file store writes its keys as files of one flat folder; a rank killed in the middle
// of a system call may still finish creating one, so the removal is tried a few times.
constexpr int kRemoveTries = 50;
constexpr long kRemoveRetryNs = 10'000'000;

// Removes the files of the folder `path` and then the folder. Async-signal-safe: raw
// system calls only (getdents64 rather than opendir, which allocates).
bool remove_flat_folder(const char* path) {
  const int fd = ::open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT;
  alignas(8) char buffer[4096];
  for (;;) {
    const long n = ::syscall(SYS_getdents64, fd, buffer, sizeof buffer);
    if (n <= 0) break;
    for (long at = 0; at < n;) {
      const auto* entry = reinterpret_cast<const struct dirent64*>(buffer + at);
      at += entry->d_reclen;
      const char* name = entry->d_name;
      if (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'))) continue;
      if (::unlinkat(fd, name, 0) != 0 && errno == EISDIR) ::unlinkat(fd, name, AT_REMOVEDIR);
    }
  }
  ::close(fd);
  return ::rmdir(path) == 0 || errno == ENOENT;
}

// Forks a process outside the group that removes `folder` once this watchdog, which kills
// the group and itself last, is gone: it waits for the end of a pipe only the watchdog holds.
void start_folder_remover(const char* folder) {
  int fds[2];
  if (::pipe(fds) != 0) return;
  const pid_t remover = ::fork();
  if (remover == 0) {
    ::setpgid(0, 0);
    ::close(fds[1]);
    char byte = 0;
    while (::read(fds[0], &byte, 1) < 0 && errno == EINTR) {
    }
    const struct timespec pause { 0, kRemoveRetryNs };
    for (int i = 0; i < kRemoveTries && !remove_flat_folder(folder); ++i) ::nanosleep(&pause, nullptr);
    ::_exit(0);
  }
  // Here too, so that the remover has left the group before the group is killed.
  if (remover > 0) ::setpgid(remover, remover);
  ::close(fds[0]);  // the write end stays open until this process dies
}

// The watchdog, between fork and _exit: async-signal-safe calls only (the launcher may
// have threads).
[[noreturn]] void watch_launcher(int watch_fd, const char* folder) {
  ::setpgid(0, 0);
  // The launcher forwards these to the group; the watchdog must outlive the grace period.
  for (const int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE}) ::signal(sig, SIG_IGN);
  ::signal(SIGCHLD, SIG_DFL);
  // Nothing else of the launcher's stays open here (its output pipes, the ranks' pipes).
  if (watch_fd > 0) ::close_range(0, static_cast<unsigned>(watch_fd) - 1, 0);
  ::close_range(static_cast<unsigned>(watch_fd) + 1, UINT_MAX, 0);
  char byte = 0;
  while (::read(watch_fd, &byte, 1) < 0 && errno == EINTR) {
  }
  // The launcher is gone: its rendezvous folder goes after the whole group, this process last.
  if (folder[0] != '\0') start_folder_remover(folder);
  ::kill(0, SIGKILL);
  ::_exit(0);
}

}  // namespace

RankGroup::RankGroup(const std::string& folder) : folder_(folder) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  watchdog_ = ::fork();
  if (watchdog_ < 0) {
    const int err = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    throw std::runtime_error(std::string("fork: ") + std::strerror(err));
  }
  if (watchdog_ == 0) watch_launcher(fds[0], folder_.c_str());
  ::setpgid(watchdog_, watchdog_);  // also here, so the group exists before a rank joins it
  ::close(fds[0]);
  launcher_end_ = fds[1];
}

RankGroup::~RankGroup() { kill_all(); }

void RankGroup::signal(int sig) const {
  if (!killed_) ::killpg(watchdog_, sig);
}

void RankGroup::kill_all() {
  if (killed_) return;
  ::killpg(watchdog_, SIGKILL);
  killed_ = true;
  ::close(launcher_end_);
  while (::waitpid(watchdog_, nullptr, 0) < 0 && errno == EINTR) {
  }
}

}  // namespace layerplan
