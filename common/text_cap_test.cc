#include "common/text_cap.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace {

using ::testing::EndsWith;

TEST(TextCapTest, ShortTextIsKeptAndLongTextIsCutWithItsLength) {
  EXPECT_EQ(CapMessage("bad config"), "bad config");
  const std::string huge(1 << 20, 'x');
  const std::string capped = CapMessage(huge);
  EXPECT_LE(capped.size(), kMaxReportedMessageBytes);
  EXPECT_THAT(capped, EndsWith(" bytes cut]"));
  EXPECT_EQ(capped.substr(0, 100), huge.substr(0, 100));
}

TEST(TextCapTest, NeverSplitsAUtf8Character) {
  std::string text;
  for (int i = 0; i < 100; ++i) text += "\xc3\xa9";  // é, two bytes each
  const std::string capped = CapMessage(text, 64);
  EXPECT_LE(capped.size(), 64u);
  const size_t cut = capped.find(" ... [");
  ASSERT_NE(cut, std::string::npos);
  EXPECT_EQ(cut % 2, 0u);  // whole characters only
}

}  // namespace
}  // namespace tunefleet
