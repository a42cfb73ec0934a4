// ASSERT_OK(expr): a GoogleTest assertion that an absl::Status expression is
// OK, printing the expression and the status when it is not. For the
// multi-process tests in tests/.
#ifndef TUNEFLEET_TESTS_STATUS_ASSERTIONS_H_
#define TUNEFLEET_TESTS_STATUS_ASSERTIONS_H_

#include "absl/status/status.h"
#include "gtest/gtest.h"

#define ASSERT_OK(expr)                          \
  do {                                           \
    const absl::Status _s = (expr);              \
    ASSERT_TRUE(_s.ok()) << #expr << ": " << _s; \
  } while (0)

#endif  // TUNEFLEET_TESTS_STATUS_ASSERTIONS_H_
