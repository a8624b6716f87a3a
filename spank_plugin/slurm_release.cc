#include "spank_plugin/slurm_release.h"

#include <charconv>
#include <cstdio>
#include <cstring>
#include <optional>

namespace layerplan::spank {

namespace {

// A whole number of at most three digits (Slurm's are "22", "05"), else nothing.
std::optional<unsigned> release_number(const char* text) {
  if (text == nullptr) return std::nullopt;
  const size_t length = std::strlen(text);
  if (length == 0 || length > 3) return std::nullopt;
  unsigned value = 0;
  const auto [end, error] = std::from_chars(text, text + length, value);
  if (error != std::errc() || end != text + length) return std::nullopt;
  return value;
}

// What Slurm gave, quoted as given when it is not a release (at most a few characters).
std::string running_text(const char* major, const char* minor) {
  const std::optional<unsigned> ma = release_number(major);
  const std::optional<unsigned> mi = release_number(minor);
  if (ma && mi) return release_text({*ma, *mi});
  std::string given =
      std::string("'") + (major != nullptr ? major : "(none)") + "'.'" + (minor != nullptr ? minor : "(none)") + "'";
  if (given.size() > 40) given = given.substr(0, 40) + "...";
  return "an unknown release (" + given + ")";
}

}  // namespace

std::string release_text(SlurmRelease release) {
  char text[32];
  std::snprintf(text, sizeof text, "%u.%02u", release.major, release.minor);
  return text;
}

std::string release_mismatch(SlurmRelease built, const char* running_major, const char* running_minor) {
  const std::optional<unsigned> major = release_number(running_major);
  const std::optional<unsigned> minor = release_number(running_minor);
  if (major == built.major && minor == built.minor) return "";
  return "layerplan: spank_layerplan.so was built for Slurm " + release_text(built) + " but runs in Slurm " +
         running_text(running_major, running_minor) +
         ": layerplan is off for this job (install the layerplan package built for this Slurm release)";
}

}  // namespace layerplan::spank
