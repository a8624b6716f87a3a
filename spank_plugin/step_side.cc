#include "spank_plugin/step_side.h"

#include <unistd.h>

#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <utility>

#include "common/error.h"
#include "common/input_file.h"
#include "spank_plugin/output_text.h"
#include "spank_plugin/plan_file.h"
#include "spank_plugin/plan_once.h"
#include "spank_plugin/planning_process.h"
#include "spank_plugin/plugin_state.h"
#include "spank_plugin/user_plan_dir.h"

namespace layerplan::spank {

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

// The step's value of `name` (its environment, not slurmstepd's); empty when unset.
std::string step_getenv(spank_t sp, const char* name) {
  char buf[4096];
  if (spank_getenv(sp, name, buf, sizeof buf) != ESPANK_SUCCESS) return "";
  return buf;
}

uint32_t item_u32(spank_t sp, spank_item_t item, const char* what) {
  uint32_t value = 0;
  const spank_err_t rc = spank_get_item(sp, item, &value);
  require(rc == ESPANK_SUCCESS, std::string("cannot read the job's ") + what + ": " + spank_strerror(rc));
  return value;
}

// Nodes in the step. S_JOB_NNODES is the step's count in an srun step but 0 in the batch
// step, whose plan is for the whole job.
int step_node_count(spank_t sp, uint32_t step_id) {
  uint32_t nnodes = 0;
  if (step_id != kBatchStepId && spank_get_item(sp, S_JOB_NNODES, &nnodes) == ESPANK_SUCCESS && nnodes > 0) {
    return static_cast<int>(nnodes);
  }
  for (const char* name : {"SLURM_JOB_NUM_NODES", "SLURM_NNODES"}) {
    const std::string text = step_getenv(sp, name);
    char* end = nullptr;
    const long n = std::strtol(text.c_str(), &end, 10);
    if (!text.empty() && *end == '\0' && n >= 1 && n <= INT_MAX) return static_cast<int>(n);
  }
  throw UsageError("cannot tell how many nodes the job has (S_JOB_NNODES, SLURM_JOB_NUM_NODES and SLURM_NNODES unset)");
}

void record(PluginState& s, const std::string& message) {
  if (s.error.empty()) s.error = message;
  s.active = false;
}

template <typename F>
int guarded(const char* where, F&& body) {
  PluginState& s = state();
  try {
    body(s);
  } catch (const std::exception& e) {
    record(s, e.what());
  } catch (...) {
    record(s, std::string("internal error in ") + where);
  }
  return 0;
}

// `sbatch --export=NONE` hands the batch step no options, but sbatch's copies of them
// are in its environment (SLURM_SPANK__SLURM_SPANK_OPTION_layerplan_<name>): use those.
void options_from_environment(spank_t sp, PluginState& s) {
  const std::pair<const char*, OptionId> names[] = {{"layerplan", OptionId::kMode},
                                                    {"layerplan_model", OptionId::kModel},
                                                    {"layerplan_batch", OptionId::kBatch},
                                                    {"layerplan_explain", OptionId::kExplain}};
  for (const auto& [name, id] : names) {
    const std::string value =
        step_getenv(sp, (std::string("SLURM_SPANK__SLURM_SPANK_OPTION_layerplan_") + name).c_str());
    if (value.empty()) continue;
    set_job_option(s.options, id, id == OptionId::kExplain ? nullptr : value.c_str());
    s.any_option = true;
  }
}

// The job's user, as the planning process is to become: uid, primary and supplementary
// groups as Slurm resolved them for the job.
ChildIdentity job_user(spank_t sp) {
  ChildIdentity user;
  spank_err_t rc = spank_get_item(sp, S_JOB_UID, &user.uid);
  require(rc == ESPANK_SUCCESS, std::string("cannot read the job's uid: ") + spank_strerror(rc));
  rc = spank_get_item(sp, S_JOB_GID, &user.gid);
  require(rc == ESPANK_SUCCESS, std::string("cannot read the job's gid: ") + spank_strerror(rc));
  gid_t* groups = nullptr;
  int count = 0;
  rc = spank_get_item(sp, S_JOB_SUPPLEMENTARY_GIDS, &groups, &count);
  require(rc == ESPANK_SUCCESS, std::string("cannot read the job's groups: ") + spank_strerror(rc));
  if (groups != nullptr && count > 0) user.groups.assign(groups, groups + count);
  return user;
}

// What the plan depends on besides the request and the node (plan_once.h): the admin
// config's text (root may read it; the planning process may not) and the overrides.
std::string plan_inputs_text(const PluginState& s) {
  std::string text;
  if (!s.config.path.empty()) {
    try {
      text = read_input_file(s.config.path, "admin config", int64_t{16} << 20);
    } catch (const std::exception&) {
      text = "unreadable " + s.config.path;  // it was read a moment ago; the key only gets coarser
    }
  }
  for (const auto& [key, value] : s.args.overrides) text += "\n" + key + "=" + value;
  return text;
}

// Steps whose nodes may share one plan (plan_once.h). The batch script runs on one node
// though its plan is for all of the job's.
bool shares_plan(const PluginState& s) { return s.args.plan_once && s.nodes > 1 && s.step_id != kBatchStepId; }

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "?";
  return name;
}

void post_opt(spank_t sp, PluginState& s) {
  if (!s.error.empty()) return;  // a bad option: task_init reports it
  if (!s.any_option) options_from_environment(sp, s);
  s.job_id = item_u32(sp, S_JOB_ID, "job id");
  s.step_id = item_u32(sp, S_JOB_STEPID, "step id");
  if (s.step_id == kExternStepId) return;  // no tasks of the user's run there
  s.node_id = item_u32(sp, S_JOB_NODEID, "node id");
  if (!s.args_error.empty()) {
    if (s.any_option) throw UsageError(s.args_error);
    s.notice = s.args_error + "; layerplan is off for this job";
    return;
  }
  try {
    s.config = load_plugin_config(s.args);
  } catch (const UsageError& e) {
    if (s.any_option) throw UsageError(std::string("admin config: ") + e.what());
    // Nobody asked for layerplan: run the job untouched rather than fail every job.
    s.notice = std::string("admin config: ") + e.what() + "; layerplan is off for this job";
    return;
  }
  s.request = resolve_step_request(s.options, s.config.slurm);
  if (s.request.off) return;
  s.nodes = step_node_count(sp, s.step_id);
  GpuEnvironment env;
  env.slurm_step_gpus = step_getenv(sp, "SLURM_STEP_GPUS");
  env.slurm_job_gpus = step_getenv(sp, "SLURM_JOB_GPUS");
  env.cuda_visible_devices = step_getenv(sp, "CUDA_VISIBLE_DEVICES");
  const Clock::time_point t0 = Clock::now();
  s.node = discover_step_node(s.config, env);
  s.discover_ms = ms_since(t0);
  s.user = job_user(sp);
  s.plan_inputs_text = plan_inputs_text(s);
  // Root's work: plan_dir is usually root's folder; the user writes into theirs later.
  if (!s.config.slurm.plan_dir.empty()) {
    s.user_plan_dir = prepare_user_plan_dir(s.config.slurm.plan_dir, user_dir_name(s.user.uid), s.user.uid, s.user.gid);
  }
  s.active = true;
}

// The folder for the plan file: the per-user folder under the admin's plan_dir, else the
// job's working directory (slurmstepd has changed into it by user_init), else the
// submission directory.
std::string plan_folder(spank_t sp, const PluginState& s) {
  if (!s.user_plan_dir.empty()) return s.user_plan_dir;
  char cwd[PATH_MAX];
  if (::getcwd(cwd, sizeof cwd) && std::string(cwd) != "/") return cwd;
  return step_getenv(sp, "SLURM_SUBMIT_DIR");
}

void export_plan(spank_t sp, const PluginState& s, const ChildReport& report, double process_ms) {
  for (const auto& [name, value] : report.environment) {
    const spank_err_t rc = spank_setenv(sp, name.c_str(), value.c_str(), 1);
    require(rc == ESPANK_SUCCESS, "cannot set " + name + ": " + spank_strerror(rc));
  }
  // slurmd's log: what the plugin added to the step's start (docs/BENCHMARKS.md).
  slurm_info("layerplan: job %u.%s node %u: topology %.1f ms, plan %.1f ms, write %.1f ms, process %.1f ms: %s: %s",
             s.job_id, step_label(s.step_id).c_str(), s.node_id, s.discover_ms, report.plan_ms, report.write_ms,
             process_ms, report.origin.c_str(), report.summary.c_str());
  // Every node of a multi-node step says where its plan came from (docs/slurm-plugin.md).
  if (s.nodes > 1 && s.step_id != kBatchStepId) {
    slurm_spank_log("layerplan: job %u.%s node %u: %s", s.job_id, step_label(s.step_id).c_str(), s.node_id,
                    report.origin.c_str());
  }
  if (s.node_id != 0) return;  // one node speaks for the step in the job's output
  if (!report.warning.empty()) slurm_spank_log("layerplan: warning: %s", report.warning.c_str());
  for (const std::string& line : report.explain) slurm_spank_log("%s", line.c_str());
}

// Everything that touches the user's files or runs the search happens in a child that is
// the job's user for good (planning_process.h); slurmstepd only exports what it sends.
void user_init(spank_t sp, PluginState& s) {
  // Messages reach the job's output from user_init on, not from init_post_opt.
  if (!s.notice.empty() && s.node_id == 0) slurm_spank_log("layerplan: warning: %s", printable(s.notice).c_str());
  if (!s.active) return;
  PlanningInput input{s.request,
                      s.node,
                      s.nodes,
                      s.config,
                      s.job_id,
                      s.step_id,
                      s.start,
                      plan_folder(sp, s),
                      s.args.planning_memory_mb,
                      s.args.planning_margin_s,
                      shares_plan(s) ? plan_inputs_key(s.request, s.node, s.nodes, s.plan_inputs_text) : "",
                      "node " + std::to_string(s.node_id) + " (" + host_name() + ")"};
  require(!has_control_characters(input.folder),
          "the plan folder '" + input.folder + "' has control characters in its path: run the job from another folder");
  const Clock::time_point t0 = Clock::now();
  const ChildReport report = plan_in_child(input, s.user);
  const double process_ms = ms_since(t0);
  if (!report.error.empty()) {
    // The job's output gets the reason from task_init; slurmd's log gets it here.
    slurm_info("layerplan: job %u.%s node %u: error after %.1f ms: %s", s.job_id, step_label(s.step_id).c_str(),
               s.node_id, process_ms, report.error.c_str());
    record(s, report.error);
    return;
  }
  export_plan(sp, s, report, process_ms);
}

// True when the step runs `layerplan train` (any path to the binary): only such a step
// must have one task per device; other steps of the job (srun hostname, a shell) run as
// they are.
bool runs_layerplan_train(spank_t sp) {
  int argc = 0;
  char** argv = nullptr;
  if (spank_get_item(sp, S_JOB_ARGV, &argc, &argv) != ESPANK_SUCCESS || argc < 2 || argv == nullptr) return false;
  const std::string program = argv[0];
  const std::string base = program.substr(program.find_last_of('/') + 1);  // npos + 1 == 0
  return base == "layerplan" && std::string(argv[1]) == "train";
}

// A step of `layerplan train` whose task count differs from its plan's device count would
// fail after connecting; say so at task start, naming both and the srun line that fits.
std::string task_count_mismatch(spank_t sp, const PluginState& s) {
  if (!s.active || s.step_id == kBatchStepId || s.step_id == kExternStepId || !runs_layerplan_train(sp)) return "";
  uint32_t tasks = 0;
  if (spank_get_item(sp, S_JOB_TOTAL_TASK_COUNT, &tasks) != ESPANK_SUCCESS) return "";
  const int devices = s.nodes * s.node.gpu_count();
  if (static_cast<int>(tasks) == devices) return "";
  return "the plan is for " + std::to_string(devices) + " devices (" + std::to_string(s.nodes) + " nodes x " +
         std::to_string(s.node.gpu_count()) + " GPUs) but this step has " + std::to_string(tasks) +
         " tasks: start one task per device, e.g. `srun --mpi=pmi2 -N" + std::to_string(s.nodes) + " -n " +
         std::to_string(devices) + " layerplan train ...`";
}

}  // namespace

int step_init(spank_t) {
  state().start = std::time(nullptr);
  return 0;
}

int step_init_post_opt(spank_t sp) {
  return guarded("init_post_opt", [&](PluginState& s) { post_opt(sp, s); });
}

int step_user_init(spank_t sp) {
  return guarded("user_init", [&](PluginState& s) { user_init(sp, s); });
}

int step_task_init(spank_t sp) {
  // task_count_mismatch() builds strings: guarded, so that nothing escapes into slurmstepd.
  guarded("task_init", [&](PluginState& s) {
    if (s.error.empty()) s.error = task_count_mismatch(sp, s);
  });
  const PluginState& s = state();
  if (s.error.empty()) return 0;
  slurm_error("layerplan: %s", printable(s.error).c_str());
  return -1;
}

}  // namespace layerplan::spank
