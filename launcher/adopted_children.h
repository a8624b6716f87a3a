#pragma once
// Makes the launcher the child subreaper (PR_SET_CHILD_SUBREAPER) for the length of a
// launch: a process the ranks start and that outlives its parent is re-parented to the
// launcher instead of init, even after it has left the ranks' process group (setsid, a
// daemon's double fork). The launcher reaps such children as they exit and kills the
// ones still running when the launch ends.
//
// Children this process had before the launch began are not touched.
#include <sys/types.h>

#include <set>
#include <vector>

namespace layerplan {

class AdoptedChildren {
 public:
  AdoptedChildren();
  // Kills what is left (kill_all()) and restores the subreaper flag as it was.
  ~AdoptedChildren();
  AdoptedChildren(const AdoptedChildren&) = delete;
  AdoptedChildren& operator=(const AdoptedChildren&) = delete;

  // Reaps the adopted children that have exited, so none stays a zombie; `own` (the
  // ranks, the group's watchdog) are left to their owners.
  void reap_exited(const std::set<pid_t>& own);
  // SIGKILL to every adopted child, then reaps it; again for the children they leave to
  // us, until none is left. Returns how many were killed.
  int kill_all();

 private:
  std::vector<pid_t> adopted() const;

  std::set<pid_t> before_;
  int old_flag_ = 0;
};

}  // namespace layerplan
