#include "launcher/rank_group.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <csignal>
#include <cstring>
#include <stdexcept>
#include <string>

namespace layerplan {
namespace {

// The watchdog, between fork and _exit: async-signal-safe calls only (the launcher may
// have threads).
[[noreturn]] void watch_launcher(int watch_fd) {
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
  ::kill(0, SIGKILL);  // the launcher is gone: the whole group, this process last
  ::_exit(0);
}

}  // namespace

RankGroup::RankGroup() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  watchdog_ = ::fork();
  if (watchdog_ < 0) {
    const int err = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    throw std::runtime_error(std::string("fork: ") + std::strerror(err));
  }
  if (watchdog_ == 0) watch_launcher(fds[0]);
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
