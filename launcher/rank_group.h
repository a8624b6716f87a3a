#pragma once
// The process group every rank of one launch joins, so that the launcher can signal them,
// and whatever they start that stays in the group, as a whole.
//
// The group is led by a small watchdog process forked from the launcher. The watchdog
// holds the read end of a pipe whose write end only the launcher holds; when that pipe
// reaches end of file, the launcher has gone without stopping the group (most likely
// killed with SIGKILL), and the watchdog sends SIGKILL to the group, itself included.
// Being the leader, it also keeps the group's number from being reused while the launch
// lasts, so that signalling the group never reaches a stranger. Before that SIGKILL it forks
// a remover outside the group that, once the watchdog is gone, deletes the launch's
// rendezvous folder (which the launcher removes itself on every other way out).
#include <sys/types.h>

#include <string>

namespace layerplan {

class RankGroup {
 public:
  // Forks the watchdog, which removes the flat folder `folder` ("" none) should the
  // launcher die; throws std::runtime_error when the pipe or the fork fails.
  explicit RankGroup(const std::string& folder);
  // kill_all().
  ~RankGroup();
  RankGroup(const RankGroup&) = delete;
  RankGroup& operator=(const RankGroup&) = delete;

  // The group's id, for setpgid() in each rank.
  pid_t id() const { return watchdog_; }
  // Sends `sig` to every process of the group (the watchdog ignores all but SIGKILL).
  void signal(int sig) const;
  // SIGKILL to the whole group, the watchdog included, which is then reaped. The group's
  // number is free for reuse afterwards: signal() does nothing from then on.
  void kill_all();

 private:
  std::string folder_;  // the rendezvous folder
  pid_t watchdog_ = -1;
  int launcher_end_ = -1;  // the pipe's write end; closing it tells the watchdog we are gone
  bool killed_ = false;
};

}  // namespace layerplan
