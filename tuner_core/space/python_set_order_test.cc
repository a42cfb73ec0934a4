#include "tuner_core/space/python_set_order.h"

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace config_space_internal {
namespace {

std::vector<int64_t> Factors(int64_t n) {
  std::vector<int64_t> factors;
  for (int64_t d = 1; d <= n; ++d) {
    if (n % d == 0) factors.push_back(d);
  }
  return factors;
}

std::vector<int64_t> PowersOfTwo(int64_t n) {
  std::vector<int64_t> powers;
  for (int64_t p = 1; p <= n; p *= 2) powers.push_back(p);
  return powers;
}

// By hand for 48: set([1, 2, 3, 4, 6, 8, 12, 16, 24, 48]) grows from 8 slots
// to 32 when its fifth key (6) goes in (5 * 5 >= 7 * 3); each key k then sits
// in slot k & 31, except 48, whose slot 16 is taken, so it probes on to 17.
// The union copies that table and adds the powers of two: only 32 is new,
// and 32 & 31 = 0 is free, so 32 comes first.
TEST(PythonSetOrderTest, UnionForFortyEightPutsThirtyTwoFirst) {
  EXPECT_EQ(PythonSetUnionOrder(Factors(48), PowersOfTwo(48)),
            (std::vector<int64_t>{32, 1, 2, 3, 4, 6, 8, 12, 16, 48, 24}));
}

TEST(PythonSetOrderTest, SmallSetsComeOutSorted) {
  EXPECT_EQ(PythonSetUnionOrder(Factors(12), PowersOfTwo(12)),
            (std::vector<int64_t>{1, 2, 3, 4, 6, 8, 12}));
  EXPECT_EQ(PythonSetUnionOrder({}, {}), (std::vector<int64_t>{}));
  EXPECT_EQ(PythonSetUnionOrder({5}, {5}), (std::vector<int64_t>{5}));
}

// Golden orders printed by CPython itself (testdata header says how).
TEST(PythonSetOrderTest, MatchesCPythonForEveryExtentInTheGoldenFile) {
  std::ifstream in("tuner_core/space/testdata/autotvm_verbose_factor_orders.txt");
  ASSERT_TRUE(in.good());
  std::string line;
  int checked = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> parts = absl::StrSplit(line, ':');
    ASSERT_EQ(parts.size(), 2u) << line;
    int64_t n = 0;
    ASSERT_TRUE(absl::SimpleAtoi(parts[0], &n)) << line;
    std::vector<int64_t> expected;
    for (absl::string_view word : absl::StrSplit(parts[1], ' ', absl::SkipEmpty())) {
      int64_t value = 0;
      ASSERT_TRUE(absl::SimpleAtoi(word, &value)) << line;
      expected.push_back(value);
    }
    EXPECT_EQ(PythonSetUnionOrder(Factors(n), PowersOfTwo(n)), expected) << "n = " << n;
    ++checked;
  }
  EXPECT_GT(checked, 500);
}

}  // namespace
}  // namespace config_space_internal
}  // namespace tunefleet
