// Bandwidths with units (topology/bandwidth_text.h): what --intra-bw, --inter-bw and the
// bandwidth keys of cluster files and the admin config accept, and what they refuse.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "common/error.h"
#include "topology/bandwidth_text.h"

namespace layerplan {
namespace {

using ::testing::HasSubstr;

std::string error_of(const std::string& text, RateUnit unit) {
  try {
    parse_bandwidth(text, unit, "--inter-bw");
  } catch (const UsageError& e) {
    return e.what();
  }
  return "no error";
}

TEST(BandwidthText, ABareNumberIsInTheFlagsOwnUnit) {
  EXPECT_DOUBLE_EQ(parse_bandwidth("400", RateUnit::kGbits, "x"), 400.0);
  EXPECT_DOUBLE_EQ(parse_bandwidth("12.5", RateUnit::kGbytes, "x"), 12.5);
  EXPECT_DOUBLE_EQ(parse_bandwidth(" 100 ", RateUnit::kGbits, "x"), 100.0);
}

TEST(BandwidthText, EachUnitConvertsBitsAndBytesByEight) {
  EXPECT_DOUBLE_EQ(parse_bandwidth("400Gb/s", RateUnit::kGbits, "x"), 400.0);
  EXPECT_DOUBLE_EQ(parse_bandwidth("400 Gb/s", RateUnit::kGbits, "x"), 400.0);
  EXPECT_DOUBLE_EQ(parse_bandwidth("50GB/s", RateUnit::kGbits, "x"), 400.0);
  EXPECT_DOUBLE_EQ(parse_bandwidth("400Gb/s", RateUnit::kGbytes, "x"), 50.0);
  EXPECT_DOUBLE_EQ(parse_bandwidth("300GB/s", RateUnit::kGbytes, "x"), 300.0);
  EXPECT_DOUBLE_EQ(parse_bandwidth("1.6Tb/s", RateUnit::kGbits, "x"), 1600.0);
  EXPECT_DOUBLE_EQ(parse_bandwidth("1TB/s", RateUnit::kGbytes, "x"), 1000.0);
  EXPECT_DOUBLE_EQ(parse_bandwidth("25000Mb/s", RateUnit::kGbits, "x"), 25.0);
  EXPECT_DOUBLE_EQ(parse_bandwidth("500MB/s", RateUnit::kGbits, "x"), 4.0);
  EXPECT_DOUBLE_EQ(parse_bandwidth("8Gb/s", RateUnit::kMbytes, "x"), 1000.0);
}

TEST(BandwidthText, RefusesWhatItDoesNotKnowNamingTheFlagValueAndForms) {
  const std::string message = error_of("fast", RateUnit::kGbits);
  EXPECT_EQ(message,
            "--inter-bw 'fast': expected a bandwidth: a positive number and one of Mb/s, Gb/s, Tb/s, MB/s, GB/s, TB/s "
            "(b bits, B bytes), e.g. 400Gb/s or 50GB/s; a bare number is Gb/s");
  EXPECT_THAT(error_of("300", RateUnit::kGbytes), HasSubstr("no error"));
  EXPECT_THAT(error_of("3", RateUnit::kGbytes), HasSubstr("no error"));
  for (const char* bad :
       {"",         " ",         "0",       "0Gb/s",   "-5",        "-5Gb/s",     "inf",           "nan",
        "1e3",      "0x10",      "400gb/s", "400GBps", "400Gbit/s", "400 Gb/sec", "400Gb/s extra", "Gb/s",
        "1..2Gb/s", "400 G b/s", "400Kb/s", "1.5.5"}) {
    EXPECT_THAT(error_of(bad, RateUnit::kGbits), HasSubstr("expected a bandwidth")) << "'" << bad << "'";
  }
  // The unit a bare number has is the one named.
  EXPECT_THAT(error_of("x", RateUnit::kGbytes), HasSubstr("a bare number is GB/s"));
}

TEST(BandwidthText, AHugeValueIsRefusedNotInfinite) {
  const std::string digits(400, '9');
  EXPECT_THAT(error_of(digits + "TB/s", RateUnit::kMbits), HasSubstr("expected a bandwidth"));
}

}  // namespace
}  // namespace layerplan
