// Speed-ups in words (common/text.h): a slower plan is never worded as "faster".
#include <gtest/gtest.h>

#include "common/text.h"

namespace layerplan {
namespace {

TEST(SpeedWords, FasterIsTimesAndSlowerIsAPercentage) {
  EXPECT_EQ(speed_words(1.44), "1.44\u00d7 faster");
  EXPECT_EQ(speed_words(1.0), "1.00\u00d7 faster");
  EXPECT_EQ(speed_words(0.96), "4.2 % slower");  // 1 / 0.96 = 1.0417
  EXPECT_EQ(speed_words(0.5), "100.0 % slower");
  EXPECT_EQ(speed_words(0.05), "1900.0 % slower");
}

}  // namespace
}  // namespace layerplan
