#pragma once
// Whether the Slurm that loaded the plugin is the release (major.minor) it was built for.
// A SPANK plugin compiled against one release's <slurm/spank.h> may misread another's
// items and options, so on any other release the plugin stays off (docs/slurm-plugin.md,
// "Slurm releases").
#include <string>

namespace layerplan::spank {

struct SlurmRelease {
  unsigned major = 0;
  unsigned minor = 0;
};

// "22.05": Slurm's own spelling, the minor number in two digits.
std::string release_text(SlurmRelease release);

// Empty when Slurm's S_SLURM_VERSION_MAJOR and S_SLURM_VERSION_MINOR (strings such as "22"
// and "05"; null where Slurm did not give them) are the `built` release; otherwise the one
// line to log, naming both releases and saying that layerplan is off.
std::string release_mismatch(SlurmRelease built, const char* running_major, const char* running_minor);

}  // namespace layerplan::spank
