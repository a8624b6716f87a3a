#include "spank_plugin/release_guard.h"

#include <string>

#include "spank_plugin/slurm_release.h"

namespace layerplan::spank {

namespace {

// One release item as Slurm gives it (a string it owns), or null when it gives none.
const char* release_item(spank_t sp, spank_item_t item) {
  char* value = nullptr;
  if (spank_get_item(sp, item, &value) != ESPANK_SUCCESS) return nullptr;
  return value;
}

}  // namespace

bool wrong_slurm_release(spank_t sp) {
  constexpr SlurmRelease kBuilt{SLURM_VERSION_MAJOR(SLURM_VERSION_NUMBER), SLURM_VERSION_MINOR(SLURM_VERSION_NUMBER)};
  const std::string mismatch =
      release_mismatch(kBuilt, release_item(sp, S_SLURM_VERSION_MAJOR), release_item(sp, S_SLURM_VERSION_MINOR));
  if (mismatch.empty()) return false;
  slurm_error("%s", mismatch.c_str());
  return true;
}

}  // namespace layerplan::spank
