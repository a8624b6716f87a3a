// The plugin's check of the Slurm release that loads it (spank_plugin/slurm_release.h):
// on any other major.minor it names both releases and stays off.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "spank_plugin/slurm_release.h"

namespace layerplan::spank {
namespace {

using ::testing::HasSubstr;

constexpr SlurmRelease k2205{22, 5};

TEST(SlurmRelease, TheBuiltReleaseAsSlurmSpellsItMatches) {
  EXPECT_EQ(release_mismatch(k2205, "22", "05"), "");
  EXPECT_EQ(release_mismatch(k2205, "22", "5"), "");
  EXPECT_EQ(release_text(k2205), "22.05");
  EXPECT_EQ(release_text({23, 11}), "23.11");
}

TEST(SlurmRelease, AnotherMinorOrMajorNamesBothReleases) {
  const std::string minor = release_mismatch(k2205, "22", "06");
  EXPECT_THAT(minor, HasSubstr("built for Slurm 22.05"));
  EXPECT_THAT(minor, HasSubstr("runs in Slurm 22.06"));
  EXPECT_THAT(minor, HasSubstr("layerplan is off for this job"));
  EXPECT_THAT(release_mismatch(k2205, "23", "05"), HasSubstr("runs in Slurm 23.05"));
  EXPECT_THAT(release_mismatch(k2205, "21", "08"), HasSubstr("runs in Slurm 21.08"));
  EXPECT_EQ(minor.find('\n'), std::string::npos);
}

TEST(SlurmRelease, AReleaseSlurmDidNotGiveOrThatIsNotANumberIsAMismatch) {
  EXPECT_THAT(release_mismatch(k2205, nullptr, "05"), HasSubstr("runs in Slurm an unknown release ('(none)'.'05')"));
  EXPECT_THAT(release_mismatch(k2205, "22", nullptr), HasSubstr("unknown release"));
  EXPECT_THAT(release_mismatch(k2205, "22", ""), HasSubstr("unknown release"));
  EXPECT_THAT(release_mismatch(k2205, "22", "05x"), HasSubstr("unknown release ('22'.'05x')"));
  EXPECT_THAT(release_mismatch(k2205, "-22", "05"), HasSubstr("unknown release"));
  EXPECT_THAT(release_mismatch(k2205, "0022", "05"), HasSubstr("unknown release"));
  const std::string long_text(500, '9');
  const std::string mismatch = release_mismatch(k2205, long_text.c_str(), "05");
  EXPECT_THAT(mismatch, HasSubstr("..."));
  EXPECT_LT(mismatch.size(), 250u);
}

}  // namespace
}  // namespace layerplan::spank
