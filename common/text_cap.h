// Text from an untrusted side (a runner child's error message, a builder's
// or an agent's report) kept at a bounded size wherever it is stored or
// forwarded: a kernel owns its child's address space and can write any
// result frame, so what it says must not grow the store or the records.
#ifndef TUNEFLEET_COMMON_TEXT_CAP_H_
#define TUNEFLEET_COMMON_TEXT_CAP_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace tunefleet {

// The longest message the agent forwards and the tracker stores.
inline constexpr size_t kMaxReportedMessageBytes = 4096;

// `text` when it fits in `max_bytes`; else its first bytes, cut on a UTF-8
// character boundary, and " ... [N bytes cut]", together at most
// `max_bytes` (max_bytes >= 64).
std::string CapMessage(std::string_view text, size_t max_bytes = kMaxReportedMessageBytes);

}  // namespace tunefleet

#endif  // TUNEFLEET_COMMON_TEXT_CAP_H_
