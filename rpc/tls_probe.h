// One connection to the tracker opened the way a gRPC client opens it (TCP;
// then the HTTP/2 preface in plaintext, or a TLS handshake offering ALPN
// "h2"), with a record of what the server answered: the building blocks of
// rpc/tls_diagnosis.h, which turns that record into a named cause. Internal
// to rpc/; everything here is non-blocking underneath and bounded by a
// deadline.
//
//   TF_ASSIGN_OR_RETURN(HostPort where, SplitAddress(address));
//   TF_ASSIGN_OR_RETURN(UniqueFd fd, Connect(where, address, deadline));
//   TF_ASSIGN_OR_RETURN(std::unique_ptr<TlsClient> tls,
//                       TlsClient::Create(fd.get(), where, ca, cert, key));
//   IoResult handshake = tls->Handshake(deadline);
//   ... tls->trace().verify_error, .alert, .server_hello ...
#ifndef TUNEFLEET_RPC_TLS_PROBE_H_
#define TUNEFLEET_RPC_TLS_PROBE_H_

#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <signal.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace tunefleet::tls_internal {

template <auto Free>
struct OpenSslDeleter {
  template <typename T>
  void operator()(T* pointer) const {
    Free(pointer);
  }
};
using CertPtr = std::unique_ptr<X509, OpenSslDeleter<X509_free>>;

class UniqueFd {
 public:
  explicit UniqueFd(int fd = -1) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    std::swap(fd_, other.fd_);
    return *this;
  }
  ~UniqueFd();
  int get() const { return fd_; }

 private:
  int fd_;
};

// OpenSSL writes to sockets with write(), which raises SIGPIPE when the
// peer has closed: blocks SIGPIPE on this thread for the object's life and
// drops any that this thread raised meanwhile.
class ScopedSigpipeBlock {
 public:
  ScopedSigpipeBlock();
  ~ScopedSigpipeBlock();
  ScopedSigpipeBlock(const ScopedSigpipeBlock&) = delete;
  ScopedSigpipeBlock& operator=(const ScopedSigpipeBlock&) = delete;

 private:
  sigset_t pipe_;
  sigset_t old_;
  bool was_pending_ = false;
};

// OpenSSL's queued errors for this thread as text (and clears them).
std::string OpenSslErrors();

struct HostPort {
  std::string host;  // without [] for IPv6
  std::string port;
  bool IsIpLiteral() const;
};

// "host:port", "[v6]:port", with or without gRPC's "dns:///", "ipv4:",
// "ipv6:" prefixes. InvalidArgument otherwise.
[[nodiscard]] absl::StatusOr<HostPort> SplitAddress(absl::string_view address);

// A connected non-blocking TCP socket to the first of the host's addresses
// that accepts. Unavailable naming the errno (or the resolver's error), or
// DeadlineExceeded.
[[nodiscard]] absl::StatusOr<UniqueFd> Connect(const HostPort& where, const std::string& address,
                                               absl::Time deadline);

// What the plaintext exchange (the HTTP/2 preface and an empty SETTINGS
// frame, then a read of one frame header) found.
enum class PlainAnswer { kHttp2, kClosed, kTimeout, kOther };
PlainAnswer ExchangePreface(int fd, absl::Time deadline);

// The HTTP/2 client preface with an empty SETTINGS frame.
absl::string_view Http2Preface();

// Every PEM certificate in `pem`; InvalidArgument naming `flag` if none.
[[nodiscard]] absl::StatusOr<std::vector<CertPtr>> ParseCerts(const std::string& pem,
                                                              absl::string_view flag);

// What a handshake's callbacks saw of the server.
struct HandshakeTrace {
  bool server_hello = false;         // it answered with TLS
  bool certificate_request = false;  // it asked for a client certificate
  int alert = -1;                    // the first alert it sent (description)
  int verify_error = X509_V_OK;      // the first failure verifying its chain
  int verify_depth = 0;
  CertPtr verify_cert;  // the certificate verify_error is about
};

enum class IoResult { kDone, kFailed, kTimeout };

// A TLS client on a connected socket, set up like gRPC's: TLS 1.2 or
// newer, ALPN h2, SNI for host names (not for IP addresses).
class TlsClient {
 public:
  // ca_pem empty: a probe that verifies nothing and presents nothing.
  // Otherwise the server's chain is verified against ca_pem (failures are
  // recorded in trace(), not fatal, so that the caller can name them) and
  // cert_pem/key_pem, when set, are presented. InvalidArgument naming the
  // flag when the PEM cannot be used.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<TlsClient>> Create(
      int fd, const HostPort& where, const std::string& ca_pem, const std::string& cert_pem,
      const std::string& key_pem);
  ~TlsClient();

  IoResult Handshake(absl::Time deadline);
  // Writes `data`, then reads until at least one byte of application data
  // arrives (kDone), the connection ends (kFailed) or the deadline passes.
  IoResult WriteThenRead(absl::string_view data, absl::Time deadline);

  const HandshakeTrace& trace() const { return trace_; }
  SSL* ssl() const { return ssl_; }

 private:
  TlsClient() = default;
  template <typename Step>
  IoResult Run(absl::Time deadline, Step step);

  int fd_ = -1;
  SSL_CTX* context_ = nullptr;
  SSL* ssl_ = nullptr;
  HandshakeTrace trace_;  // the callbacks write here: the object never moves
};

}  // namespace tunefleet::tls_internal

#endif  // TUNEFLEET_RPC_TLS_PROBE_H_
