#include "common/saturating_product.h"

#include <limits>
#include <vector>

#include "gtest/gtest.h"

namespace tunefleet {
namespace {

TEST(SaturatingProductTest, MultipliesOrSaturates) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(SaturatingProduct(std::vector<int64_t>{}), 1);
  EXPECT_EQ(SaturatingProduct(std::vector<int64_t>{2, 3, 4}), 24);
  EXPECT_EQ(SaturatingProduct(std::vector<int64_t>{5, 0, 7}), 0);
  // 2^21 to the fourth power wraps int64 to 0 when multiplied plainly.
  const int64_t d = int64_t{1} << 21;
  EXPECT_EQ(SaturatingProduct(std::vector<int64_t>{d, d, d, d}), kMax);
  EXPECT_EQ(SaturatingProduct(std::vector<int64_t>{d, d, d, d, 0}), kMax);
  EXPECT_EQ(SaturatingProduct(std::vector<int64_t>{4, -1}), kMax);
}

}  // namespace
}  // namespace tunefleet
