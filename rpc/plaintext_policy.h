// Where plaintext gRPC may go: loopback only. A token sent in plaintext over
// a network is anyone's on the path, and so is the channel (a man in the
// middle answers as the tracker and hands agents its own builder keys), so
// every client of the fleet (workers, the CLI, the Python client) refuses a
// plaintext channel to any other address unless told --insecure, and the
// tracker refuses to listen off loopback without tokens.
//
//   if (credentials == nullptr)
//     TF_RETURN_IF_ERROR(CheckPlaintextAllowed(address, insecure, "--tls_ca"));
#ifndef TUNEFLEET_RPC_PLAINTEXT_POLICY_H_
#define TUNEFLEET_RPC_PLAINTEXT_POLICY_H_

#include <string>

#include "absl/status/status.h"

namespace tunefleet {

// Whether `host:port` names a loopback address: an IPv4 literal in
// 127.0.0.0/8, the IPv6 literal ::1 (in brackets), or "localhost"; a host
// name that only begins with "127." is not one.
bool IsLoopbackAddress(const std::string& address);

// OK for a plaintext channel to a loopback address (each of a comma-separated
// list of tracker replicas), or to any address when `insecure` (the user
// said so); else FailedPrecondition naming the first address that is not
// and both ways out (`tls_flag` for TLS, --insecure to accept the risk).
[[nodiscard]] absl::Status CheckPlaintextAllowed(const std::string& addresses, bool insecure,
                                                 const std::string& tls_flag);

}  // namespace tunefleet

#endif  // TUNEFLEET_RPC_PLAINTEXT_POLICY_H_
