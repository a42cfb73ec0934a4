// Test scaffolding: one unary call through grpc::GenericStub with an empty
// request, for tests that run a bare generic service (no .proto) and care
// about the call's status and the raw bytes answered.
//
//   absl::StatusOr<std::string> answer =
//       UnaryGenericCall(channel, "/tunefleet.test.WhoAmI/Call", {{"authorization", "Bearer t"}});
#ifndef TUNEFLEET_RPC_GENERIC_CALL_H_
#define TUNEFLEET_RPC_GENERIC_CALL_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "grpcpp/grpcpp.h"

namespace tunefleet {

// Calls `method` on `channel` with `metadata` (key, value pairs) and a 30 s
// deadline; the answer's bytes, or the call's status (FromGrpc).
[[nodiscard]] absl::StatusOr<std::string> UnaryGenericCall(
    std::shared_ptr<grpc::Channel> channel, const std::string& method,
    const std::vector<std::pair<std::string, std::string>>& metadata = {});

}  // namespace tunefleet

#endif  // TUNEFLEET_RPC_GENERIC_CALL_H_
