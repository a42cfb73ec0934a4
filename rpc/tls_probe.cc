#include "rpc/tls_probe.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"

namespace tunefleet::tls_internal {
namespace {

using KeyPtr = std::unique_ptr<EVP_PKEY, OpenSslDeleter<EVP_PKEY_free>>;
using BioPtr = std::unique_ptr<BIO, OpenSslDeleter<BIO_free>>;

constexpr unsigned char kAlpnH2[] = {2, 'h', '2'};

// Waits until `fd` is ready for `events`; false when the deadline passed.
bool WaitFor(int fd, short events, absl::Time deadline) {
  while (true) {
    const int64_t left_ms = absl::ToInt64Milliseconds(deadline - absl::Now());
    if (left_ms <= 0) return false;
    pollfd entry{fd, events, 0};
    const int ready = poll(&entry, 1, static_cast<int>(left_ms));
    if (ready > 0) return true;
    if (ready < 0 && errno != EINTR) return true;  // the next call reports it
  }
}

void OnMessage(int write_p, int /*version*/, int content_type, const void* buf, size_t len,
               SSL* /*ssl*/, void* arg) {
  if (write_p != 0 || len == 0) return;
  auto* trace = static_cast<HandshakeTrace*>(arg);
  const auto* bytes = static_cast<const unsigned char*>(buf);
  if (content_type == SSL3_RT_HANDSHAKE) {
    if (bytes[0] == SSL3_MT_SERVER_HELLO) trace->server_hello = true;
    if (bytes[0] == SSL3_MT_CERTIFICATE_REQUEST) trace->certificate_request = true;
  } else if (content_type == SSL3_RT_ALERT && len >= 2 && trace->alert < 0) {
    trace->alert = bytes[1];
  }
}

// Records the first failure and lets the handshake go on, so that the
// diagnosis can name the certificate it concerned.
int OnVerify(int ok, X509_STORE_CTX* store) {
  if (ok) return 1;
  auto* ssl =
      static_cast<SSL*>(X509_STORE_CTX_get_ex_data(store, SSL_get_ex_data_X509_STORE_CTX_idx()));
  auto* trace = static_cast<HandshakeTrace*>(SSL_get_app_data(ssl));
  if (trace != nullptr && trace->verify_error == X509_V_OK) {
    trace->verify_error = X509_STORE_CTX_get_error(store);
    trace->verify_depth = X509_STORE_CTX_get_error_depth(store);
    X509* cert = X509_STORE_CTX_get_current_cert(store);
    if (cert != nullptr && X509_up_ref(cert) == 1) trace->verify_cert.reset(cert);
  }
  return 1;
}

}  // namespace

UniqueFd::~UniqueFd() {
  if (fd_ >= 0) close(fd_);
}

ScopedSigpipeBlock::ScopedSigpipeBlock() {
  sigemptyset(&pipe_);
  sigaddset(&pipe_, SIGPIPE);
  sigset_t pending;
  sigpending(&pending);
  was_pending_ = sigismember(&pending, SIGPIPE) == 1;
  pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
}

ScopedSigpipeBlock::~ScopedSigpipeBlock() {
  if (!was_pending_) {
    const timespec no_wait{};
    while (sigtimedwait(&pipe_, nullptr, &no_wait) > 0) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &old_, nullptr);
}

std::string OpenSslErrors() {
  std::string text;
  while (unsigned long code = ERR_get_error()) {
    char buffer[256];
    ERR_error_string_n(code, buffer, sizeof(buffer));
    absl::StrAppend(&text, text.empty() ? "" : "; ", buffer);
  }
  return text;
}

bool HostPort::IsIpLiteral() const {
  unsigned char bytes[16];
  return inet_pton(AF_INET, host.c_str(), bytes) == 1 ||
         inet_pton(AF_INET6, host.c_str(), bytes) == 1;
}

[[nodiscard]] absl::StatusOr<HostPort> SplitAddress(absl::string_view address) {
  for (absl::string_view scheme : {"dns:///", "dns:", "ipv4:", "ipv6:"}) {
    if (absl::StartsWith(address, scheme)) address.remove_prefix(scheme.size());
  }
  const size_t colon = address.rfind(':');
  if (colon == absl::string_view::npos || colon == 0 || colon + 1 == address.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("tracker address '", address, "' is not host:port"));
  }
  absl::string_view host = address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  return HostPort{std::string(host), std::string(address.substr(colon + 1))};
}

[[nodiscard]] absl::StatusOr<UniqueFd> Connect(const HostPort& where, const std::string& address,
                                               absl::Time deadline) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (const int error = getaddrinfo(where.host.c_str(), where.port.c_str(), &hints, &found)) {
    return absl::UnavailableError(
        absl::StrCat("cannot resolve the tracker address ", address, ": ", gai_strerror(error)));
  }
  std::unique_ptr<addrinfo, OpenSslDeleter<freeaddrinfo>> addresses(found);
  int last_errno = 0;
  for (const addrinfo* candidate = found; candidate != nullptr; candidate = candidate->ai_next) {
    UniqueFd fd(socket(candidate->ai_family, candidate->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                       candidate->ai_protocol));
    if (fd.get() < 0) {
      last_errno = errno;
      continue;
    }
    if (connect(fd.get(), candidate->ai_addr, candidate->ai_addrlen) == 0) return fd;
    if (errno != EINPROGRESS) {
      last_errno = errno;
      continue;
    }
    if (!WaitFor(fd.get(), POLLOUT, deadline)) {
      return absl::DeadlineExceededError(
          absl::StrCat("cannot connect to the tracker at ", address, ": no answer in time"));
    }
    int error = 0;
    socklen_t length = sizeof(error);
    getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &error, &length);
    if (error == 0) return fd;
    last_errno = error;
  }
  return absl::UnavailableError(absl::StrCat("cannot connect to the tracker at ", address, ": ",
                                             std::strerror(last_errno), " (errno ", last_errno,
                                             ")"));
}

absl::string_view Http2Preface() {
  static constexpr char kPreface[] =
      "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00";
  return absl::string_view(kPreface, sizeof(kPreface) - 1);
}

PlainAnswer ExchangePreface(int fd, absl::Time deadline) {
  const absl::string_view preface = Http2Preface();
  if (send(fd, preface.data(), preface.size(), MSG_NOSIGNAL) !=
      static_cast<ssize_t>(preface.size())) {
    return PlainAnswer::kClosed;
  }
  // A gRPC server's first frame is SETTINGS (type 4) on stream 0.
  unsigned char header[9];
  size_t got = 0;
  while (got < sizeof(header)) {
    if (!WaitFor(fd, POLLIN, deadline)) return PlainAnswer::kTimeout;
    const ssize_t n = recv(fd, header + got, sizeof(header) - got, 0);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (n <= 0) return got == 0 ? PlainAnswer::kClosed : PlainAnswer::kOther;
    got += static_cast<size_t>(n);
  }
  const bool settings = header[3] == 4 && (header[5] & 0x7f) == 0 && header[6] == 0 &&
                        header[7] == 0 && header[8] == 0;
  return settings ? PlainAnswer::kHttp2 : PlainAnswer::kOther;
}

[[nodiscard]] absl::StatusOr<std::vector<CertPtr>> ParseCerts(const std::string& pem,
                                                              absl::string_view flag) {
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  std::vector<CertPtr> certs;
  while (X509* cert = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
    certs.emplace_back(cert);
  }
  ERR_clear_error();  // the end of the input reads as an error
  if (certs.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(flag, " holds no PEM certificate"));
  }
  return certs;
}

absl::StatusOr<std::unique_ptr<TlsClient>> TlsClient::Create(int fd, const HostPort& where,
                                                             const std::string& ca_pem,
                                                             const std::string& cert_pem,
                                                             const std::string& key_pem) {
  std::unique_ptr<TlsClient> client(new TlsClient());
  client->fd_ = fd;
  client->context_ = SSL_CTX_new(TLS_client_method());
  SSL_CTX* context = client->context_;
  if (context == nullptr || SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION) != 1 ||
      SSL_CTX_set_alpn_protos(context, kAlpnH2, sizeof(kAlpnH2)) != 0) {
    return absl::InternalError(absl::StrCat("OpenSSL client setup: ", OpenSslErrors()));
  }
  if (ca_pem.empty()) {
    SSL_CTX_set_verify(context, SSL_VERIFY_NONE, nullptr);
  } else {
    TF_ASSIGN_OR_RETURN(std::vector<CertPtr> cas, ParseCerts(ca_pem, "--tls_ca"));
    for (const CertPtr& ca : cas) X509_STORE_add_cert(SSL_CTX_get_cert_store(context), ca.get());
    SSL_CTX_set_verify(context, SSL_VERIFY_PEER, OnVerify);
  }
  if (!ca_pem.empty() && !cert_pem.empty()) {
    TF_ASSIGN_OR_RETURN(std::vector<CertPtr> chain, ParseCerts(cert_pem, "--tls_cert"));
    BioPtr key_bio(BIO_new_mem_buf(key_pem.data(), static_cast<int>(key_pem.size())));
    KeyPtr key(PEM_read_bio_PrivateKey(key_bio.get(), nullptr, nullptr, nullptr));
    if (key == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("--tls_key holds no PEM private key: ", OpenSslErrors()));
    }
    bool used = SSL_CTX_use_certificate(context, chain.front().get()) == 1;
    for (size_t i = 1; used && i < chain.size(); ++i) {
      used = SSL_CTX_add1_chain_cert(context, chain[i].get()) == 1;
    }
    if (!used || SSL_CTX_use_PrivateKey(context, key.get()) != 1 ||
        SSL_CTX_check_private_key(context) != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("--tls_key does not go with --tls_cert: ", OpenSslErrors()));
    }
  }
  client->ssl_ = SSL_new(context);
  SSL* ssl = client->ssl_;
  if (ssl == nullptr || SSL_set_fd(ssl, fd) != 1) {
    return absl::InternalError(absl::StrCat("OpenSSL session setup: ", OpenSslErrors()));
  }
  SSL_set_app_data(ssl, &client->trace_);
  SSL_set_msg_callback(ssl, OnMessage);
  SSL_set_msg_callback_arg(ssl, &client->trace_);
  if (!where.IsIpLiteral()) SSL_set_tlsext_host_name(ssl, where.host.c_str());
  return client;
}

TlsClient::~TlsClient() {
  SSL_free(ssl_);
  SSL_CTX_free(context_);
}

template <typename Step>
IoResult TlsClient::Run(absl::Time deadline, Step step) {
  while (true) {
    const int result = step();
    if (result > 0) return IoResult::kDone;
    const int error = SSL_get_error(ssl_, result);
    if (error == SSL_ERROR_WANT_READ) {
      if (!WaitFor(fd_, POLLIN, deadline)) return IoResult::kTimeout;
    } else if (error == SSL_ERROR_WANT_WRITE) {
      if (!WaitFor(fd_, POLLOUT, deadline)) return IoResult::kTimeout;
    } else {
      return IoResult::kFailed;
    }
  }
}

IoResult TlsClient::Handshake(absl::Time deadline) {
  return Run(deadline, [this] { return SSL_connect(ssl_); });
}

IoResult TlsClient::WriteThenRead(absl::string_view data, absl::Time deadline) {
  // A failed write still leaves the server's last words (an alert) to read.
  Run(deadline, [&] { return SSL_write(ssl_, data.data(), static_cast<int>(data.size())); });
  char buffer[64];
  return Run(deadline, [&] { return SSL_read(ssl_, buffer, sizeof(buffer)); });
}

}  // namespace tunefleet::tls_internal
