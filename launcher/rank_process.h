#pragma once
// One rank of `layerplan launch` as the launcher sees it: a child process started with its
// environment, its CPUs and pipes for its output (launcher/local_launcher.h says what a
// rank gets), and the forwarding of what it writes, line by line with its prefix.
#include <poll.h>
#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "common/cpu_shares.h"
#include "launcher/line_prefixer.h"

namespace layerplan {

// A file descriptor closed on destruction.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() { reset(); }
  Fd(Fd&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  Fd& operator=(Fd&& other) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  void reset();

 private:
  int fd_;
};

// What every rank of one launch runs, and where its output goes.
struct RankCommand {
  std::string program;            // the executable's path (find it first: execve does not search PATH)
  std::vector<std::string> argv;  // argv[0] included
  int world = 1;
  std::string store_dir;  // LAYERPLAN_STORE_DIR
  std::string backend;    // LAYERPLAN_BACKEND
  int stdin_fd = -1;      // the ranks' stdin (/dev/null)
  int out_fd = 1;         // where the ranks' prefixed stdout goes
  int err_fd = 2;         // and their stderr
};

class RankProcess {
 public:
  // Forks rank `rank` of `command` into the existing process group `group`, pinned to
  // `share`. Throws std::runtime_error when a pipe or the fork fails.
  RankProcess(const RankCommand& command, int rank, const CpuShare& share, pid_t group);
  RankProcess(RankProcess&& other) noexcept;
  RankProcess& operator=(RankProcess&&) = delete;
  RankProcess(const RankProcess&) = delete;
  RankProcess& operator=(const RankProcess&) = delete;
  // A rank still running (the launch is being abandoned) is killed and reaped.
  ~RankProcess();

  pid_t pid() const { return pid_; }
  bool running() const { return running_; }
  int status() const { return status_; }  // waitpid's, once it has exited

  // Whether it has exited, without waiting: true the one time it is found to have exited.
  bool reap();
  // Adds its pipes that are still open to `fds`.
  void add_pipes(std::vector<pollfd>& fds) const;
  // Copies what it has written so far to the launcher's output; closes a pipe at its end.
  void forward_output();
  // Writes out a last line that has no newline yet.
  void finish_output();
  // The last line it wrote to stderr, else to stdout ("" if none).
  std::string last_line() const;

 private:
  pid_t pid_ = -1;
  bool running_ = false;
  int status_ = 0;
  Fd out_, err_;
  std::unique_ptr<LinePrefixer> out_lines_, err_lines_;
};

}  // namespace layerplan
