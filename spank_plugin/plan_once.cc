#include "spank_plugin/plan_once.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>
#include <thread>
#include <utility>

#include "common/safe_write.h"
#include "spank_plugin/isolated_child.h"

namespace layerplan::spank {

namespace {

using Clock = std::chrono::steady_clock;

// As in plan_file.cc: nodes of one step start within seconds of each other, so a lock or
// marker written this long before our own start is an earlier job's with the same id.
constexpr std::time_t kSameStepSlackS = 60;
constexpr off_t kMaxLockBytes = 4096;
constexpr off_t kMaxMarkerBytes = static_cast<off_t>(kMaxReportBytes) + kMaxLockBytes;

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

void add(std::string& text, const std::string& value) {
  text += std::to_string(value.size());
  text += ':';
  text += value;
}

void add(std::string& text, double value) {
  char number[40];
  std::snprintf(number, sizeof number, "%.17g", value);
  add(text, std::string(number));
}

uint64_t fnv1a(const std::string& text) {
  uint64_t hash = 14695981039346656037ULL;
  for (const char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ULL;
  }
  return hash;
}

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "";
  return name;
}

// Only the user can create names in a folder that is theirs and writable by nobody else;
// elsewhere another user could plant a lock (every node would wait) or a marker.
bool folder_is_private(int dir_fd) {
  struct stat st {};
  return ::fstat(dir_fd, &st) == 0 && st.st_uid == ::geteuid() && (st.st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

// The text of NAME in the folder when it is a regular file of this user written at or
// after `not_before`, at most `max_bytes` long; nullopt otherwise (absent included).
std::optional<std::string> read_fresh(int dir_fd, const std::string& name, std::time_t not_before, off_t max_bytes) {
  Fd in{::openat(dir_fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)};
  if (in.fd < 0) return std::nullopt;
  struct stat st {};
  if (::fstat(in.fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid() || st.st_size > max_bytes ||
      st.st_mtime < not_before) {
    return std::nullopt;
  }
  std::string text(static_cast<size_t>(st.st_size), '\0');
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::read(in.fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;
    done += static_cast<size_t>(n);
  }
  return text;
}

// Writes NAME through a temporary file renamed onto it (common/safe_write.h), so that a
// reader sees all of it or nothing (and a stale file of that name is replaced). False on
// any failure.
bool write_atomically(int dir_fd, const std::string& name, const std::string& text) {
  try {
    NewFile file(dir_fd, "", name, "marker", 0600);
    file.write(text);
    file.publish();
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

// The marker: the winner's label on the first line, then its encoded report.
void write_marker(int dir_fd, const std::string& name, const std::string& label, const ChildReport& report) {
  try {
    write_atomically(dir_fd, name, label + "\n" + encode_child_report(report));
  } catch (const std::exception&) {
    // Out of memory, say: the waiters time out and plan themselves.
  }
}

struct Marker {
  std::string label;
  ChildReport report;
};

std::optional<Marker> read_marker(int dir_fd, const std::string& name, std::time_t not_before) {
  const std::optional<std::string> text = read_fresh(dir_fd, name, not_before, kMaxMarkerBytes);
  if (!text) return std::nullopt;
  const size_t newline = text->find('\n');
  if (newline == std::string::npos) return std::nullopt;
  Marker marker;
  marker.label = text->substr(0, newline);
  try {
    marker.report = decode_child_report(text->substr(newline + 1));
  } catch (const std::exception&) {
    marker.report.error = "its marker is malformed";
  }
  return marker;
}

struct LockOwner {
  std::string label, host;
  long pid = 0;
};

LockOwner read_lock(int dir_fd, const std::string& name) {
  LockOwner owner;
  const std::optional<std::string> text = read_fresh(dir_fd, name, 0, kMaxLockBytes);
  if (!text) return owner;
  const size_t first = text->find('\n');
  const size_t second = first == std::string::npos ? first : text->find('\n', first + 1);
  if (second == std::string::npos) return owner;
  owner.label = text->substr(0, first);
  owner.host = text->substr(first + 1, second - first - 1);
  owner.pid = std::strtol(text->c_str() + second + 1, nullptr, 10);
  return owner;
}

// The lock's planning process has ended, where we can tell: it ran on this host (as the
// fake nodes of one machine do, or a node that runs two steps' processes).
bool owner_gone(const LockOwner& owner, const std::string& our_host) {
  if (owner.pid <= 0 || owner.host.empty() || owner.host != our_host) return false;
  return ::kill(static_cast<pid_t>(owner.pid), 0) != 0 && errno == ESRCH;
}

enum class LockResult { kOurs, kTaken, kUnusable };

// Creates the lock, removing once a stale one (and its marker) of an earlier job.
LockResult take_lock(int dir_fd, const std::string& lock, const std::string& marker, std::time_t step_start,
                     const std::string& content) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    Fd fd{::openat(dir_fd, lock.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)};
    if (fd.fd >= 0) {
      write_all(fd.fd, content);  // a waiter that reads it half-written only cannot tell who
      return LockResult::kOurs;
    }
    if (errno != EEXIST) return LockResult::kUnusable;
    struct stat st {};
    if (::fstatat(dir_fd, lock.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;  // gone meanwhile: retry
    if (!S_ISREG(st.st_mode) || st.st_uid != ::geteuid()) return LockResult::kUnusable;
    if (st.st_mtime >= step_start - kSameStepSlackS) return LockResult::kTaken;
    // Two nodes may both remove a stale lock; then both plan, which is only wasted work.
    ::unlinkat(dir_fd, marker.c_str(), 0);
    ::unlinkat(dir_fd, lock.c_str(), 0);
  }
  return LockResult::kUnusable;
}

// The winner's plan file as this node names it: the same file may be mounted at another
// path on the winner's node, so its name is looked up in our folder (a regular file of
// ours) and the report's path and LAYERPLAN_PLAN say our path. False when it is not there.
bool take_plan_path(int dir_fd, const std::string& folder, ChildReport& report) {
  const std::string name = report.plan_path.substr(report.plan_path.find_last_of('/') + 1);  // npos + 1 == 0
  struct stat st {};
  if (name.empty() || name == "." || name == ".." || ::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 ||
      !S_ISREG(st.st_mode) || st.st_uid != ::geteuid()) {
    return false;
  }
  report.plan_path = folder + "/" + name;
  for (auto& [variable, value] : report.environment) {
    if (variable == "LAYERPLAN_PLAN") value = report.plan_path;
  }
  return true;
}

ChildReport planned_here(const std::function<ChildReport()>& plan_here, const std::string& origin) {
  ChildReport report = plan_here();
  report.origin = origin;
  return report;
}

std::string seconds_text(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", seconds);
  return text;
}

struct SharedFiles {
  int dir_fd = -1;
  std::string lock, marker;
  std::string host;  // this host's name
};

// We hold the lock: plan, and tell the others through the marker, failures included.
ChildReport plan_as_winner(const PlanOnceSetup& setup, const SharedFiles& files,
                           const std::function<ChildReport()>& plan_here) {
  ChildReport report;
  try {
    report = plan_here();
  } catch (const std::exception& e) {
    ChildReport failure;
    failure.error = e.what();
    write_marker(files.dir_fd, files.marker, setup.node_label, failure);
    throw;
  } catch (...) {
    ChildReport failure;
    failure.error = "internal error while planning";
    write_marker(files.dir_fd, files.marker, setup.node_label, failure);
    throw;
  }
  write_marker(files.dir_fd, files.marker, setup.node_label, report);
  report.origin = "planned here";
  return report;
}

// The winner's finished marker made into our report, or our own plan when it failed.
ChildReport from_marker(const PlanOnceSetup& setup, const SharedFiles& files, Marker found,
                        const std::function<ChildReport()>& plan_here) {
  if (!found.report.error.empty()) return planned_here(plan_here, "planned here: " + found.label + " could not plan");
  if (!take_plan_path(files.dir_fd, setup.folder, found.report)) {
    return planned_here(plan_here, "planned here: the plan file of " + found.label + " is not in this folder");
  }
  found.report.origin = "plan from " + found.label;
  found.report.plan_ms = 0.0;
  found.report.write_ms = 0.0;
  return std::move(found.report);
}

// Another node holds the lock: wait for its marker, within the bound.
ChildReport wait_for_winner(const PlanOnceSetup& setup, const SharedFiles& files,
                            const std::function<ChildReport()>& plan_here) {
  const std::time_t not_before = setup.step_start - kSameStepSlackS;
  const Clock::time_point deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(setup.wait_s));
  for (;;) {
    if (std::optional<Marker> found = read_marker(files.dir_fd, files.marker, not_before)) {
      return from_marker(setup, files, std::move(*found), plan_here);
    }
    const LockOwner owner = read_lock(files.dir_fd, files.lock);
    if (owner_gone(owner, files.host)) {
      // It may have finished just now.
      if (std::optional<Marker> found = read_marker(files.dir_fd, files.marker, not_before)) {
        return from_marker(setup, files, std::move(*found), plan_here);
      }
      return planned_here(plan_here, "planned here: " + owner.label + " stopped before its plan was ready");
    }
    if (Clock::now() >= deadline) {
      return planned_here(plan_here, "planned here: shared plan not ready after " + seconds_text(setup.wait_s) + " s");
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(setup.poll_s));
  }
}

}  // namespace

std::string plan_inputs_key(const StepRequest& request, const NodeTopology& node, int nodes,
                            const std::string& config_text) {
  std::string text = "layerplan plan inputs 1;";
  add(text, request.mode);
  add(text, request.plan_file.value_or(""));
  add(text, request.model);
  add(text, request.batch ? std::to_string(*request.batch) : "default");
  add(text, request.batch_per_gpu ? std::to_string(*request.batch_per_gpu) + " per GPU" : "");
  add(text, request.explain ? "explain" : "");
  add(text, std::to_string(nodes));
  for (const GpuInfo& gpu : node.gpus) {
    add(text, gpu.model);
    add(text, gpu.memory_bytes);
    add(text, gpu.pcie_gbytes);
    add(text, std::to_string(gpu.numa_node) + "," + std::to_string(gpu.package));
  }
  for (const GpuLink& link : node.links) {
    add(text, std::to_string(static_cast<int>(link.kind)) + "," + std::to_string(link.nvlinks));
    add(text, link.gbytes);
  }
  for (const NicInfo& nic : node.nics) {
    add(text, nic.name + "," + nic.kind + "," + nic.device + "," + (nic.active ? "up" : "down"));
    add(text, nic.pcie_gbytes);
  }
  add(text, std::to_string(node.nvswitches.size()));
  add(text, config_text);
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(fnv1a(text)));
  return hex;
}

ChildReport plan_once(const PlanOnceSetup& setup, const std::function<ChildReport()>& plan_here) {
  Fd folder{::open(setup.folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
  // A folder we cannot open: plan_here() publishes there and says why that fails.
  if (folder.fd < 0) return planned_here(plan_here, "planned here");
  if (!folder_is_private(folder.fd)) {
    return planned_here(plan_here, "planned here (others may write to the plan folder, so it is not shared)");
  }
  const SharedFiles files{folder.fd, "." + setup.stem + ".lock", "." + setup.stem + ".done", host_name()};
  const std::string content = setup.node_label + "\n" + files.host + "\n" + std::to_string(::getpid()) + "\n";
  switch (take_lock(folder.fd, files.lock, files.marker, setup.step_start, content)) {
    case LockResult::kOurs:
      return plan_as_winner(setup, files, plan_here);
    case LockResult::kTaken:
      return wait_for_winner(setup, files, plan_here);
    case LockResult::kUnusable:
      break;
  }
  return planned_here(plan_here, "planned here");
}

}  // namespace layerplan::spank
