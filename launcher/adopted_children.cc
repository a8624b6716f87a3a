#include "launcher/adopted_children.h"

#include <sys/prctl.h>
#include <sys/wait.h>

#include <cerrno>
#include <csignal>
#include <filesystem>
#include <fstream>

namespace layerplan {
namespace {

// This process's children, zombies included, from every thread's children list.
std::vector<pid_t> children_of_this_process() {
  std::vector<pid_t> children;
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task", ec)) {
    std::ifstream in(task.path() / "children");
    for (pid_t pid = 0; in >> pid;) children.push_back(pid);
  }
  return children;
}

void reap(pid_t pid) {
  while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
  }
}

}  // namespace

AdoptedChildren::AdoptedChildren() {
  const std::vector<pid_t> children = children_of_this_process();
  before_.insert(children.begin(), children.end());
  ::prctl(PR_GET_CHILD_SUBREAPER, &old_flag_);
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
}

AdoptedChildren::~AdoptedChildren() {
  kill_all();
  ::prctl(PR_SET_CHILD_SUBREAPER, old_flag_);
}

std::vector<pid_t> AdoptedChildren::adopted() const {
  std::vector<pid_t> result;
  for (const pid_t pid : children_of_this_process()) {
    if (!before_.contains(pid)) result.push_back(pid);
  }
  return result;
}

void AdoptedChildren::reap_exited(const std::set<pid_t>& own) {
  for (const pid_t pid : adopted()) {
    if (!own.contains(pid)) ::waitpid(pid, nullptr, WNOHANG);
  }
}

int AdoptedChildren::kill_all() {
  // An unreaped child keeps its pid, so these signals cannot reach a stranger. Each round
  // takes one generation: a killed child's own children are adopted in its place.
  int killed = 0;
  for (int round = 0; round < 1000; ++round) {
    const std::vector<pid_t> children = adopted();
    if (children.empty()) break;
    for (const pid_t pid : children) ::kill(pid, SIGKILL);
    for (const pid_t pid : children) reap(pid);
    killed += static_cast<int>(children.size());
  }
  return killed;
}

}  // namespace layerplan
