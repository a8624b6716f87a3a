#include "spank_plugin/plan_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/input_file.h"
#include "common/safe_write.h"
#include "common/text.h"

namespace layerplan::spank {

namespace {

constexpr off_t kMaxPlanBytes = 64 << 20;
// Nodes of one step start within seconds of each other; a differing file older than this
// before our own start cannot come from this step.
constexpr std::time_t kSameStepSlackS = 60;

std::string errno_text() { return std::strerror(errno); }

// Closes the descriptor when it goes out of scope.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// "layerplan-12.0.json" -> "layerplan-12.0.RANDOM.json".
std::string insert_random(const std::string& name) {
  const size_t dot = name.rfind(".json");
  const std::string stem = dot == std::string::npos ? name : name.substr(0, dot);
  return stem + "." + random_hex() + ".json";
}

// The existing file's text; refuses symlinks, non-regular files and other users' files.
std::string read_existing(int dir_fd, const std::string& name, const std::string& path, struct stat& st) {
  Fd in{::openat(dir_fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)};
  require(in.fd >= 0, "plan file '" + path + "' exists and cannot be opened (" + errno_text() +
                          "): it is not a regular file of this user");
  require(::fstat(in.fd, &st) == 0 && S_ISREG(st.st_mode), "plan file '" + path + "' exists and is not a regular file");
  require(st.st_uid == ::geteuid(), "plan file '" + path + "' exists and belongs to uid " + std::to_string(st.st_uid) +
                                        ", not to this job's user");
  require(st.st_size <= kMaxPlanBytes, "plan file '" + path + "' exists and is larger than 64 MiB");
  std::string text(static_cast<size_t>(st.st_size), '\0');
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::read(in.fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    require(n >= 0, "cannot read plan file '" + path + "': " + errno_text());
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  text.resize(done);
  return text;
}

std::string field_text(const nlohmann::json& doc, const char* outer, const char* inner) {
  const nlohmann::json* node = &doc;
  if (outer) {
    if (!doc.contains(outer)) return "";
    node = &doc[outer];
  }
  if (!node->is_object() || !node->contains(inner)) return "";
  const nlohmann::json& value = (*node)[inner];
  return clipped(value.is_string() ? value.get<std::string>() : value.is_structured() ? "{...}" : value.dump());
}

}  // namespace

std::string step_label(uint32_t step_id) {
  if (step_id == kBatchStepId) return "batch";
  if (step_id == kExternStepId) return "extern";
  if (step_id == kInteractiveStepId) return "interactive";
  return std::to_string(step_id);
}

std::string plan_file_name(uint32_t job_id, uint32_t step_id) {
  return "layerplan-" + std::to_string(job_id) + "." + step_label(step_id) + ".json";
}

std::string plan_difference(const std::string& ours, const std::string& theirs) {
  if (ours == theirs) return "";
  // Deeper nesting than a plan has would overflow the stack of whoever compares the trees.
  if (json_nests_deeper_than(ours) || json_nests_deeper_than(theirs)) return "one of them is not a plan file";
  nlohmann::json a = nlohmann::json::parse(ours, nullptr, false);
  nlohmann::json b = nlohmann::json::parse(theirs, nullptr, false);
  if (a.is_discarded() || b.is_discarded()) return "one of them is not a plan file";
  // How long the search took differs from node to node; the plan itself must not.
  for (nlohmann::json* doc : {&a, &b}) {
    if (doc->contains("search") && (*doc)["search"].is_object()) (*doc)["search"].erase("seconds");
  }
  if (a == b) return "";
  struct Field {
    const char* outer;
    const char* inner;
    const char* label;
  };
  const Field fields[] = {{"cluster", "gpu", "GPU"},        {"cluster", "gpus_per_node", "GPUs per node"},
                          {"cluster", "nodes", "nodes"},    {"cluster", "description", "node figures"},
                          {nullptr, "model", "model"},      {nullptr, "batch", "batch"},
                          {nullptr, "strategy", "strategy"}};
  std::string out;
  for (const Field& f : fields) {
    const std::string x = field_text(a, f.outer, f.inner);
    const std::string y = field_text(b, f.outer, f.inner);
    if (x == y) continue;
    out += (out.empty() ? "" : "; ") + std::string(f.label) + " '" + x + "' here, '" + y + "' in the file";
  }
  return out.empty() ? "the per-layer plans differ" : out;
}

std::string publish_plan(const std::string& dir, const std::string& name, const std::string& text,
                         std::time_t step_start) {
  require(!dir.empty(),
          "no folder for the plan file: set plan_dir in the admin config or give the job a working directory");
  Fd folder{::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
  require(folder.fd >= 0, "cannot open the plan folder '" + dir + "': " + errno_text());
  struct stat dst {};
  require(::fstat(folder.fd, &dst) == 0, "cannot stat the plan folder '" + dir + "': " + errno_text());
  require((dst.st_mode & S_IWOTH) == 0 || (dst.st_mode & S_ISVTX) != 0,
          "the plan folder '" + dir +
              "' is writable by everyone and has no sticky bit, so another user could replace the plan file: "
              "run the job from another folder or set plan_dir in the admin config");
  // Only the user can create names in a private folder; elsewhere, nobody may guess ours.
  const bool shared = dst.st_uid != ::geteuid() || (dst.st_mode & (S_IWGRP | S_IWOTH)) != 0;
  const std::string final_name = shared ? insert_random(name) : name;
  std::string path = dir + "/" + final_name;
  NewFile file(folder.fd, dir, final_name, "plan file", 0600);
  file.write(text);
  if (file.publish_if_absent()) return path;
  require(!shared, "plan file '" + path + "': another file took its random name");
  struct stat st {};
  const std::string existing = read_existing(folder.fd, final_name, path, st);
  const std::string difference = plan_difference(text, existing);
  if (difference.empty()) return path;
  if (st.st_mtime >= step_start - kSameStepSlackS) {
    throw UsageError("the nodes of this job step planned differently (" + difference +
                     "); every node of a step needs the same GPUs and figures: plan file '" + path + "'");
  }
  file.publish();  // replaces the stale file
  return path;
}

}  // namespace layerplan::spank
