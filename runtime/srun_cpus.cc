#include "runtime/srun_cpus.h"

#include <sched.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "common/error.h"

namespace layerplan {
namespace {

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

int env_count(const char* name) {
  const std::string text = env(name);
  char* end = nullptr;
  const long value = std::strtol(text.c_str(), &end, 10);
  return (!text.empty() && *end == '\0' && value >= 0 && value <= 1'000'000) ? static_cast<int>(value) : 0;
}

std::string layout_problem(const std::string& text) {
  return "SLURM_STEP_TASKS_PER_NODE='" + text + "': expected counts like 2(x3),1";
}

// One positive number at `p`, advancing it; throws on anything else.
int number_at(const std::string& text, size_t& p) {
  const size_t begin = p;
  long value = 0;
  while (p < text.size() && text[p] >= '0' && text[p] <= '9' && p - begin < 7) value = value * 10 + (text[p++] - '0');
  require(p > begin && value >= 1, layout_problem(text));
  return static_cast<int>(value);
}

}  // namespace

std::vector<int> parse_tasks_per_node(const std::string& text) {
  std::vector<int> counts;
  size_t p = 0;
  while (p < text.size()) {
    const int tasks = number_at(text, p);
    int repeat = 1;
    if (p < text.size() && text[p] == '(') {
      require(text.compare(p, 2, "(x") == 0, layout_problem(text));
      p += 2;
      repeat = number_at(text, p);
      require(p < text.size() && text[p] == ')', layout_problem(text));
      ++p;
    }
    require(counts.size() + static_cast<size_t>(repeat) <= 1'000'000,
            "SLURM_STEP_TASKS_PER_NODE='" + text + "': more than a million nodes");
    counts.insert(counts.end(), static_cast<size_t>(repeat), tasks);
    if (p < text.size()) {
      require(text[p] == ',', layout_problem(text));
      ++p;
      require(p < text.size(), layout_problem(text));
    }
  }
  return counts;
}

SrunTask srun_task_from_env() {
  return {.local_rank = env_count("SLURM_LOCALID"),
          .node_index = env_count("SLURM_NODEID"),
          .tasks_per_node = env("SLURM_STEP_TASKS_PER_NODE"),
          .cpu_bind_type = env("SLURM_CPU_BIND_TYPE")};
}

std::optional<CpuShare> srun_cpu_share(const SrunTask& task, const std::vector<int>& allowed) {
  if (allowed.empty()) return std::nullopt;
  const bool slurm_bound = !task.cpu_bind_type.empty() && task.cpu_bind_type.rfind("none", 0) != 0;
  if (slurm_bound) return CpuShare{allowed, static_cast<int>(allowed.size())};
  if (task.tasks_per_node.empty()) return std::nullopt;
  const std::vector<int> counts = parse_tasks_per_node(task.tasks_per_node);
  require(task.node_index >= 0 && static_cast<size_t>(task.node_index) < counts.size(),
          "SLURM_NODEID=" + std::to_string(task.node_index) + ": expected a node of SLURM_STEP_TASKS_PER_NODE='" +
              task.tasks_per_node + "'");
  const int local_tasks = counts[static_cast<size_t>(task.node_index)];
  require(task.local_rank >= 0 && task.local_rank < local_tasks,
          "SLURM_LOCALID=" + std::to_string(task.local_rank) + ": expected 0.." + std::to_string(local_tasks - 1));
  return split_cpus(allowed, local_tasks)[static_cast<size_t>(task.local_rank)];
}

void pin_to(const CpuShare& share) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : share.cpus) CPU_SET(c, &set);
  if (::sched_setaffinity(0, sizeof set, &set) != 0) {
    throw UsageError(std::string("cannot pin this task to its CPUs: ") + std::strerror(errno));
  }
}

}  // namespace layerplan
