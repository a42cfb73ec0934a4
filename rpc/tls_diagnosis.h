// Names the cause of a failed TLS connection to the tracker, where gRPC
// reports only "failed to connect to all addresses" or "Socket closed".
//
//   grpc::Status rpc = stub->GetJob(&context, request, &response);
//   if (!rpc.ok()) return ExplainUnavailable(FromGrpc(rpc), address, tls.get());
//
// DiagnoseTlsConnection makes ONE connection the way a gRPC client with the
// same credentials would: TCP, then (with TLS) a handshake offering ALPN
// "h2", verifying the tracker's chain against the CA, checking the address's
// host name or IP against the certificate's names, presenting the client
// certificate if there is one, and then the HTTP/2 preface and a short read,
// so that a refusal the server sends after a TLS 1.3 handshake (a missing or
// unknown client certificate) arrives. Without TLS it sends the HTTP/2
// preface and, if no HTTP/2 answer comes, probes whether the server speaks
// TLS instead. It returns OK, or an error whose message names the cause:
//   Unavailable         cannot connect (errno), or the peer answered
//                       neither HTTP/2 nor TLS
//   DeadlineExceeded    no answer within the timeout
//   FailedPrecondition  TLS on one side only; the tracker's certificate not
//                       signed by the CA, expired, not yet valid, or for
//                       other names
//   Unauthenticated     the tracker requires a client certificate, or
//                       refused this one
//   InvalidArgument     the PEM given here cannot be used
// Messages use the flag names the daemons and the CLI take (--tls_ca,
// --tls_cert, --tls_key; the tracker's --tls_client_ca).
//
// Thread-safe; blocks for at most about `timeout` (twice when a second probe
// is needed), so call it once when a dial fails, not on every retry. Needs
// no gRPC: plain sockets and OpenSSL.
#ifndef TUNEFLEET_RPC_TLS_DIAGNOSIS_H_
#define TUNEFLEET_RPC_TLS_DIAGNOSIS_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace tunefleet {

// A client's TLS material as PEM text (what --tls_ca, --tls_cert and
// --tls_key name). cert and key are both empty or both set.
struct TlsClientPem {
  std::string ca;    // the CA that signed the tracker's certificate
  std::string cert;  // this client's certificate chain ("" = none)
  std::string key;   // its private key
};

// Reads --tls_ca, --tls_cert and --tls_key with the rules of
// MakeTlsCredentials (worker_stream/worker_connection.h): an empty ca_file means a
// plaintext client and returns nullptr; a certificate needs --tls_ca, and
// --tls_cert and --tls_key go together (InvalidArgument otherwise). Each
// file is read whole, up to kMaxPemFileBytes; errors name the file.
[[nodiscard]] absl::StatusOr<std::unique_ptr<TlsClientPem>> LoadTlsClientPem(
    const std::string& ca_file, const std::string& cert_file, const std::string& key_file);

// How long ExplainUnavailable lets the diagnosis take.
inline constexpr absl::Duration kDefaultTlsDiagnosisTimeout = absl::Seconds(5);

// `address` is "host:port" or "[v6]:port" (what the channel dials); `tls`
// nullptr means the client is plaintext. See the banner for the causes.
[[nodiscard]] absl::Status DiagnoseTlsConnection(const std::string& address,
                                                 const TlsClientPem* tls, absl::Duration timeout);

// For an Unavailable `rpc_error`, runs DiagnoseTlsConnection (with
// kDefaultTlsDiagnosisTimeout) and returns rpc_error with the cause
// appended; the code becomes the cause's (FailedPrecondition,
// Unauthenticated, InvalidArgument) when it is a misconfiguration that no
// retry will mend, and stays Unavailable otherwise. Any other rpc_error, or
// a diagnosis that finds nothing wrong, is returned unchanged.
[[nodiscard]] absl::Status ExplainUnavailable(const absl::Status& rpc_error,
                                              const std::string& address, const TlsClientPem* tls);

}  // namespace tunefleet

#endif  // TUNEFLEET_RPC_TLS_DIAGNOSIS_H_
