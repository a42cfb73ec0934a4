// Small helpers for propagating absl::Status, which the Abseil release in
// Debian 12 (20220623) does not ship. Use them in functions that return
// absl::Status or absl::StatusOr<T>.
//
//   TF_RETURN_IF_ERROR(DoThing());
//   TF_ASSIGN_OR_RETURN(auto value, ComputeValue());
#ifndef TUNEFLEET_COMMON_STATUS_MACROS_H_
#define TUNEFLEET_COMMON_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define TF_STATUS_CONCAT_INNER_(a, b) a##b
#define TF_STATUS_CONCAT_(a, b) TF_STATUS_CONCAT_INNER_(a, b)

#define TF_RETURN_IF_ERROR(expr)             \
  do {                                       \
    ::absl::Status tf_status_ = (expr);      \
    if (!tf_status_.ok()) return tf_status_; \
  } while (0)

#define TF_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                              \
  if (!tmp.ok()) return std::move(tmp).status();  \
  lhs = std::move(tmp).value()

#define TF_ASSIGN_OR_RETURN(lhs, expr) \
  TF_ASSIGN_OR_RETURN_IMPL_(TF_STATUS_CONCAT_(tf_statusor_, __LINE__), lhs, expr)

#endif  // TUNEFLEET_COMMON_STATUS_MACROS_H_
