#pragma once
// The command tests' check of a usage error: exit code 2 and exactly one line on stderr,
// starting "layerplan: " and holding `text`.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "tests/cli_harness.h"

namespace layerplan {
namespace testing_cli {

inline void expect_usage_error(const Outcome& r, const std::string& text) {
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_THAT(r.err, ::testing::StartsWith("layerplan: "));
  EXPECT_EQ(lines_of(r.err).size(), 1u) << r.err;
  EXPECT_THAT(r.err, ::testing::HasSubstr(text));
}

}  // namespace testing_cli
}  // namespace layerplan
