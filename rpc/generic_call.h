// Test scaffolding for tests that run a bare generic service (no .proto):
// a server for it on loopback, and one unary call through grpc::GenericStub
// with raw request bytes, for the call's status and the raw bytes answered.
//
//   std::string address;
//   std::unique_ptr<grpc::Server> server =
//       StartGenericServer(grpc::InsecureServerCredentials(), &service, &address);
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

// A server on 127.0.0.1 (a free port) with `credentials`, running
// `service`; its "127.0.0.1:PORT" in *address. Null when it did not start
// or got no port.
std::unique_ptr<grpc::Server> StartGenericServer(
    std::shared_ptr<grpc::ServerCredentials> credentials, grpc::CallbackGenericService* service,
    std::string* address);

// Calls `method` on `channel` with `metadata` (key, value pairs), the
// serialized `request` and a 30 s deadline; the answer's bytes, or the
// call's status (FromGrpc).
[[nodiscard]] absl::StatusOr<std::string> UnaryGenericCall(
    std::shared_ptr<grpc::Channel> channel, const std::string& method,
    const std::vector<std::pair<std::string, std::string>>& metadata = {},
    const std::string& request = "");

}  // namespace tunefleet

#endif  // TUNEFLEET_RPC_GENERIC_CALL_H_
