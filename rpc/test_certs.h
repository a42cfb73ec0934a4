// A throwaway PKI for tests of TLS: two CAs and certificates signed by them,
// generated at test time with OpenSSL (P-256 keys, SHA-256), so that no key
// is ever committed. Every string is PEM.
//
//   TF_ASSIGN_OR_RETURN(TestPki pki, GenerateTestPki());
//   grpc::SslServerCredentialsOptions ssl;
//   ssl.pem_key_cert_pairs.push_back({pki.server.key_pem, pki.server.cert_pem});
//   ... a client trusts pki.ca_pem ...
//
// Validity is relative to the real clock, because that is the clock TLS
// peers check certificates against.
#ifndef TUNEFLEET_RPC_TEST_CERTS_H_
#define TUNEFLEET_RPC_TEST_CERTS_H_

#include <string>

#include "absl/status/statusor.h"

namespace tunefleet {

struct TestCertAndKey {
  std::string cert_pem;
  std::string key_pem;
};

// The identity (URI SAN) of TestPki::client and of TestPki::foreign_client.
inline constexpr char kTestClientIdentity[] = "spiffe://fleet/agent/board-7";
// The identity of TestPki::other_client.
inline constexpr char kTestOtherClientIdentity[] = "spiffe://fleet/agent/board-8";
// The only name TestPki::other_name_server is for.
inline constexpr char kTestOtherServerName[] = "tracker.other.example";

struct TestPki {
  std::string ca_pem;        // "CN=TuneFleet test CA": signs everything below but foreign_*
  std::string other_ca_pem;  // "CN=Other test CA": signs foreign_*

  // Servers. Unless said otherwise: IP:127.0.0.1 and DNS:localhost, valid
  // from a day ago for a year, signed by ca.
  TestCertAndKey server;
  TestCertAndKey expired_server;        // expired a day ago
  TestCertAndKey not_yet_valid_server;  // valid from tomorrow
  TestCertAndKey other_name_server;     // DNS:tracker.other.example only
  TestCertAndKey foreign_server;        // signed by other_ca

  // Clients, each with one URI SAN.
  TestCertAndKey client;          // kTestClientIdentity, signed by ca
  TestCertAndKey other_client;    // kTestOtherClientIdentity, signed by ca
  TestCertAndKey foreign_client;  // kTestClientIdentity, signed by other_ca
};

// Generates the whole set (a few milliseconds). Internal if OpenSSL fails.
[[nodiscard]] absl::StatusOr<TestPki> GenerateTestPki();

}  // namespace tunefleet

#endif  // TUNEFLEET_RPC_TEST_CERTS_H_
