#include "spank_plugin/submit_side.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>

#include "common/error.h"
#include "job/job_plan.h"
#include "model/model_file.h"
#include "spank_plugin/output_text.h"
#include "spank_plugin/plugin_state.h"

namespace layerplan::spank {

namespace {

// The checks that need only the submitting user's view: the admin config, when this host
// can read it (else the node checks at job start), the mode against allowed_modes, and
// that the model or plan file exists and reads.
void check_submission(PluginState& s) {
  if (!s.any_option) return;  // nothing asked: the node applies the admin's default
  require(s.args_error.empty(), s.args_error);
  AdminConfig config;
  try {
    config = load_plugin_config(s.args);
  } catch (const std::exception& e) {
    slurm_verbose("layerplan: admin config not checked here (%s); the nodes check it at job start",
                  printable(e.what()).c_str());
    return;
  }
  const StepRequest request = resolve_step_request(s.options, config.slurm);
  for (const std::string& note : request.notes) slurm_info("layerplan: %s", printable(note).c_str());
  if (request.off) return;
  if (request.plan_file) {
    const int fd = ::open(request.plan_file->c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    require(fd >= 0, "--layerplan plan file '" + *request.plan_file + "' cannot be read: " + std::strerror(errno));
    ::close(fd);
    if (!request.model_given) return;
  }
  resolve_model(request.model, config.slurm.model_path,
                request.batch_per_gpu.value_or(request.batch.value_or(1)));  // throws naming the model
}

}  // namespace

int submit_init_post_opt(spank_t) {
  try {
    check_submission(state());
    return 0;
  } catch (const std::exception& e) {
    slurm_error("layerplan: %s", printable(e.what()).c_str());
  } catch (...) {
    slurm_error("layerplan: internal error while checking the options");
  }
  return -1;
}

}  // namespace layerplan::spank
