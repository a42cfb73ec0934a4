#include "rpc/tls_diagnosis.h"

#include <arpa/inet.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <ctime>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "common/file_util.h"
#include "common/status_macros.h"
#include "rpc/tls_probe.h"

namespace tunefleet {
namespace {

using tls_internal::CertPtr;
using tls_internal::HandshakeTrace;
using tls_internal::HostPort;
using tls_internal::IoResult;
using tls_internal::PlainAnswer;
using tls_internal::TlsClient;
using tls_internal::UniqueFd;
using BioPtr = std::unique_ptr<BIO, tls_internal::OpenSslDeleter<BIO_free>>;

std::string Utc(absl::Time time) {
  return absl::FormatTime("%Y-%m-%d %H:%M:%S UTC", time, absl::UTCTimeZone());
}

std::string NameText(const X509_NAME* name) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  X509_NAME_print_ex(bio.get(), name, 0, XN_FLAG_ONELINE & ~ASN1_STRFLGS_ESC_MSB);
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio.get(), &data);
  return size > 0 ? std::string(data, static_cast<size_t>(size)) : "(empty name)";
}

std::string CertNames(const X509* cert) {
  return absl::StrCat("issuer: ", NameText(X509_get_issuer_name(cert)),
                      ", subject: ", NameText(X509_get_subject_name(cert)));
}

std::string TimeText(const ASN1_TIME* time) {
  tm parts{};
  if (time == nullptr || ASN1_TIME_to_tm(time, &parts) != 1) return "(unreadable date)";
  return Utc(absl::FromTimeT(timegm(&parts)));
}

// The names a certificate is for: its SANs, or its CN when it has none.
std::string CertIsFor(X509* cert) {
  std::vector<std::string> names;
  auto* sans =
      static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr));
  for (int i = 0; sans != nullptr && i < sk_GENERAL_NAME_num(sans); ++i) {
    const GENERAL_NAME* name = sk_GENERAL_NAME_value(sans, i);
    int string_type = 0;
    const auto* value =
        static_cast<const ASN1_STRING*>(GENERAL_NAME_get0_value(name, &string_type));
    const std::string bytes(reinterpret_cast<const char*>(ASN1_STRING_get0_data(value)),
                            static_cast<size_t>(ASN1_STRING_length(value)));
    if (name->type == GEN_DNS) names.push_back(absl::StrCat("DNS:", bytes));
    if (name->type == GEN_URI) names.push_back(absl::StrCat("URI:", bytes));
    if (name->type == GEN_IPADD) {
      char text[INET6_ADDRSTRLEN] = "?";
      inet_ntop(bytes.size() == 4 ? AF_INET : AF_INET6, bytes.data(), text, sizeof(text));
      names.push_back(absl::StrCat("IP:", text));
    }
  }
  GENERAL_NAMES_free(sans);
  if (names.empty()) {
    return absl::StrCat(NameText(X509_get_subject_name(cert)), " (no subject alternative names)");
  }
  return absl::StrJoin(names, ", ");
}

// The message for a failed verification of the tracker's chain.
[[nodiscard]] absl::Status DescribeVerifyError(const HandshakeTrace& trace,
                                               const TlsClientPem& tls) {
  const X509* cert = trace.verify_cert.get();
  const std::string whose = trace.verify_depth == 0
                                ? "the tracker's certificate"
                                : absl::StrCat("the CA certificate at depth ", trace.verify_depth,
                                               " of the tracker's chain");
  const std::string names = cert != nullptr ? CertNames(cert) : "no certificate";
  const std::string now = Utc(absl::Now());
  switch (trace.verify_error) {
    case X509_V_ERR_CERT_HAS_EXPIRED:
      return absl::FailedPreconditionError(
          absl::StrCat(whose, " expired on ", TimeText(cert ? X509_get0_notAfter(cert) : nullptr),
                       " (this machine's clock says ", now, "; ", names, ")"));
    case X509_V_ERR_CERT_NOT_YET_VALID:
      return absl::FailedPreconditionError(absl::StrCat(
          whose, " is not valid before ", TimeText(cert ? X509_get0_notBefore(cert) : nullptr),
          " (this machine's clock says ", now, "; ", names, ")"));
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
    case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
    case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
    case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
    case X509_V_ERR_CERT_SIGNATURE_FAILURE: {
      std::vector<std::string> cas;
      if (absl::StatusOr<std::vector<CertPtr>> certs = tls_internal::ParseCerts(tls.ca, "--tls_ca");
          certs.ok()) {
        for (const CertPtr& ca : *certs) cas.push_back(NameText(X509_get_subject_name(ca.get())));
      }
      return absl::FailedPreconditionError(
          absl::StrCat(whose, " is not signed by the CA in --tls_ca (", names, "; --tls_ca holds ",
                       absl::StrJoin(cas, " and "), ")"));
    }
    default:
      return absl::FailedPreconditionError(
          absl::StrCat(whose, " does not verify against --tls_ca: ",
                       X509_verify_cert_error_string(trace.verify_error), " (", names, ")"));
  }
}

// The tracker refused this client's certificate or wanted one: `how` says
// what it did (an alert, or closing the connection right after the
// handshake, which is what gRPC servers do: they send no alert).
[[nodiscard]] absl::Status DescribeClientCertRefusal(const TlsClient& client,
                                                     const TlsClientPem& tls,
                                                     const std::string& address,
                                                     const std::string& how) {
  if (tls.cert.empty()) {
    return absl::UnauthenticatedError(
        absl::StrCat("the tracker at ", address,
                     " requires a client certificate: pass --tls_cert and --tls_key (", how, ")"));
  }
  std::vector<std::string> accepted;
  if (const STACK_OF(X509_NAME)* names = SSL_get0_peer_CA_list(client.ssl())) {
    for (int i = 0; i < sk_X509_NAME_num(names); ++i) {
      accepted.push_back(NameText(sk_X509_NAME_value(names, i)));
    }
  }
  const std::string accepts =
      accepted.empty() ? ""
                       : absl::StrCat("; the tracker accepts client certificates issued by ",
                                      absl::StrJoin(accepted, " or "));
  absl::StatusOr<std::vector<CertPtr>> chain = tls_internal::ParseCerts(tls.cert, "--tls_cert");
  if (!chain.ok()) return chain.status();
  X509* leaf = chain->front().get();
  const std::string mine = absl::StrCat("--tls_cert: ", CertNames(leaf), accepts);
  if (X509_cmp_current_time(X509_get0_notAfter(leaf)) < 0) {
    return absl::UnauthenticatedError(absl::StrCat(
        "the tracker at ", address, " refused this client's certificate, which expired on ",
        TimeText(X509_get0_notAfter(leaf)), " (", how, "; ", mine, ")"));
  }
  if (X509_cmp_current_time(X509_get0_notBefore(leaf)) > 0) {
    return absl::UnauthenticatedError(
        absl::StrCat("the tracker at ", address,
                     " refused this client's certificate, which is not valid before ",
                     TimeText(X509_get0_notBefore(leaf)), " (", how, "; ", mine, ")"));
  }
  return absl::UnauthenticatedError(
      absl::StrCat("the tracker at ", address, " refused this client's certificate (", how,
                   "): is it signed by the tracker's --tls_client_ca? (", mine, ")"));
}

bool IsClientCertAlert(int alert, const HandshakeTrace& trace) {
  switch (alert) {
    case TLS13_AD_CERTIFICATE_REQUIRED:
    case SSL_AD_CERTIFICATE_EXPIRED:
    case SSL_AD_UNKNOWN_CA:
    case SSL_AD_BAD_CERTIFICATE:
    case SSL_AD_CERTIFICATE_UNKNOWN:
    case SSL_AD_UNSUPPORTED_CERTIFICATE:
    case SSL_AD_ACCESS_DENIED:
    case SSL_AD_DECRYPT_ERROR:
      return true;
    case SSL_AD_HANDSHAKE_FAILURE:  // TLS 1.2's answer to a missing certificate
      return trace.certificate_request;
    default:
      return false;
  }
}

// An alert the tracker sent.
[[nodiscard]] absl::Status DescribeAlert(const TlsClient& client, const TlsClientPem& tls,
                                         const std::string& address) {
  const std::string alert =
      absl::StrCat("alert: ", SSL_alert_desc_string_long(client.trace().alert));
  if (IsClientCertAlert(client.trace().alert, client.trace())) {
    return DescribeClientCertRefusal(client, tls, address, alert);
  }
  return absl::UnavailableError(
      absl::StrCat("the tracker at ", address, " ended the TLS connection (", alert, ")"));
}

[[nodiscard]] absl::Status NoAnswer(const std::string& address, absl::Duration timeout,
                                    absl::string_view when) {
  return absl::DeadlineExceededError(absl::StrCat("the tracker at ", address, " sent nothing ",
                                                  when, " within ", absl::FormatDuration(timeout)));
}

// A plaintext client: the HTTP/2 preface, then (when no HTTP/2 answer came)
// a TLS probe to say whether the server wants TLS.
[[nodiscard]] absl::Status DiagnosePlaintext(const HostPort& where, const std::string& address,
                                             absl::Duration timeout) {
  TF_ASSIGN_OR_RETURN(UniqueFd fd, tls_internal::Connect(where, address, absl::Now() + timeout));
  const PlainAnswer answer = tls_internal::ExchangePreface(fd.get(), absl::Now() + timeout);
  if (answer == PlainAnswer::kHttp2) return absl::OkStatus();

  const absl::Time deadline = absl::Now() + timeout;
  TF_ASSIGN_OR_RETURN(UniqueFd probe_fd, tls_internal::Connect(where, address, deadline));
  TF_ASSIGN_OR_RETURN(std::unique_ptr<TlsClient> probe,
                      TlsClient::Create(probe_fd.get(), where, "", "", ""));
  probe->Handshake(deadline);
  ERR_clear_error();
  if (probe->trace().server_hello) {
    return absl::FailedPreconditionError(
        absl::StrCat("the tracker at ", address,
                     " speaks TLS but this client is plaintext: pass --tls_ca (the CA that "
                     "signed the tracker's certificate)"));
  }
  if (answer == PlainAnswer::kTimeout) return NoAnswer(address, timeout, "to the HTTP/2 preface");
  return absl::UnavailableError(
      absl::StrCat("the tracker at ", address,
                   " answered neither as a plaintext gRPC server (HTTP/2) nor with TLS: is "
                   "something else listening on that port?"));
}

// After a handshake the server never answered with TLS: is it a plaintext
// gRPC server?
[[nodiscard]] absl::Status DiagnoseNoTlsAnswer(const HostPort& where, const std::string& address,
                                               absl::Duration timeout, IoResult handshake,
                                               const std::string& ssl_errors) {
  const absl::Time deadline = absl::Now() + timeout;
  TF_ASSIGN_OR_RETURN(UniqueFd fd, tls_internal::Connect(where, address, deadline));
  if (tls_internal::ExchangePreface(fd.get(), deadline) == PlainAnswer::kHttp2) {
    return absl::FailedPreconditionError(
        absl::StrCat("the tracker at ", address,
                     " does not speak TLS (plaintext server) but this client uses --tls_ca: "
                     "drop --tls_ca, or give the tracker --tls_cert and --tls_key"));
  }
  if (handshake == IoResult::kTimeout) return NoAnswer(address, timeout, "to a TLS ClientHello");
  return absl::UnavailableError(absl::StrCat("the tracker at ", address,
                                             " did not answer the TLS handshake (",
                                             ssl_errors.empty() ? "connection closed" : ssl_errors,
                                             ") and is no plaintext gRPC server either"));
}

[[nodiscard]] absl::Status DiagnoseTls(const HostPort& where, const std::string& address,
                                       const TlsClientPem& tls, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  TF_ASSIGN_OR_RETURN(UniqueFd fd, tls_internal::Connect(where, address, deadline));
  TF_ASSIGN_OR_RETURN(std::unique_ptr<TlsClient> client,
                      TlsClient::Create(fd.get(), where, tls.ca, tls.cert, tls.key));
  const HandshakeTrace& trace = client->trace();
  const IoResult handshake = client->Handshake(deadline);
  const std::string ssl_errors = tls_internal::OpenSslErrors();
  // In the order gRPC would stop at them: the server's answer, its chain,
  // its name, ALPN, then what the server makes of our certificate.
  if (handshake != IoResult::kDone && !trace.server_hello) {
    return DiagnoseNoTlsAnswer(where, address, timeout, handshake, ssl_errors);
  }
  if (trace.verify_error != X509_V_OK) return DescribeVerifyError(trace, tls);
  if (trace.alert >= 0) return DescribeAlert(*client, tls, address);
  if (handshake == IoResult::kTimeout) {
    return NoAnswer(address, timeout, "to finish the handshake");
  }
  if (handshake == IoResult::kFailed) {
    return absl::UnavailableError(
        absl::StrCat("the TLS handshake with the tracker at ", address, " failed: ", ssl_errors));
  }

  X509* peer = SSL_get0_peer_certificate(client->ssl());
  if (peer == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("the tracker at ", address, " presented no certificate"));
  }
  const bool name_ok = where.IsIpLiteral() ? X509_check_ip_asc(peer, where.host.c_str(), 0) == 1
                                           : X509_check_host(peer, where.host.data(),
                                                             where.host.size(), 0, nullptr) == 1;
  if (!name_ok) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the tracker's certificate is for ", CertIsFor(peer), " but the address is ", where.host));
  }
  const unsigned char* alpn = nullptr;
  unsigned int alpn_length = 0;
  SSL_get0_alpn_selected(client->ssl(), &alpn, &alpn_length);
  if (absl::string_view(reinterpret_cast<const char*>(alpn), alpn_length) != "h2") {
    return absl::FailedPreconditionError(
        absl::StrCat("the server at ", address,
                     " completed TLS but did not choose ALPN h2: it is no gRPC server, or a "
                     "proxy in front of it does not pass HTTP/2"));
  }

  // A TLS 1.3 server checks the client's certificate after the client's
  // side of the handshake is done: its refusal arrives on the first read.
  const IoResult read = client->WriteThenRead(tls_internal::Http2Preface(), deadline);
  const std::string read_errors = tls_internal::OpenSslErrors();
  if (trace.alert >= 0 && trace.alert != SSL_AD_CLOSE_NOTIFY) {
    return DescribeAlert(*client, tls, address);
  }
  if (read == IoResult::kTimeout) return NoAnswer(address, timeout, "after the TLS handshake");
  if (read == IoResult::kFailed && trace.certificate_request) {
    return DescribeClientCertRefusal(
        *client, tls, address, "it closed the connection right after the handshake, no alert");
  }
  if (read == IoResult::kFailed) {
    return absl::UnavailableError(
        absl::StrCat("the tracker at ", address, " closed the connection after the TLS handshake",
                     read_errors.empty() ? "" : absl::StrCat(" (", read_errors, ")")));
  }
  return absl::OkStatus();
}

}  // namespace

[[nodiscard]] absl::StatusOr<std::unique_ptr<TlsClientPem>> LoadTlsClientPem(
    const std::string& ca_file, const std::string& cert_file, const std::string& key_file) {
  if (ca_file.empty()) {
    if (!cert_file.empty() || !key_file.empty()) {
      return absl::InvalidArgumentError(
          "a client certificate needs --tls_ca (the CA of the tracker's certificate)");
    }
    return std::unique_ptr<TlsClientPem>();
  }
  if (cert_file.empty() != key_file.empty()) {
    return absl::InvalidArgumentError("--tls_cert and --tls_key go together");
  }
  auto pem = std::make_unique<TlsClientPem>();
  TF_ASSIGN_OR_RETURN(pem->ca, ReadFileToString(ca_file, kMaxPemFileBytes));
  if (!cert_file.empty()) {
    TF_ASSIGN_OR_RETURN(pem->cert, ReadFileToString(cert_file, kMaxPemFileBytes));
    TF_ASSIGN_OR_RETURN(pem->key, ReadFileToString(key_file, kMaxPemFileBytes));
  }
  return pem;
}

[[nodiscard]] absl::Status DiagnoseTlsConnection(const std::string& address,
                                                 const TlsClientPem* tls, absl::Duration timeout) {
  TF_ASSIGN_OR_RETURN(HostPort where, tls_internal::SplitAddress(address));
  if (tls != nullptr && tls->ca.empty()) {
    return absl::InvalidArgumentError("--tls_ca is empty (a plaintext client passes no TLS)");
  }
  if (tls != nullptr && tls->cert.empty() != tls->key.empty()) {
    return absl::InvalidArgumentError("--tls_cert and --tls_key go together");
  }
  tls_internal::ScopedSigpipeBlock no_sigpipe;
  ERR_clear_error();
  absl::Status cause = tls == nullptr ? DiagnosePlaintext(where, address, timeout)
                                      : DiagnoseTls(where, address, *tls, timeout);
  ERR_clear_error();
  return cause;
}

[[nodiscard]] absl::Status ExplainUnavailable(const absl::Status& rpc_error,
                                              const std::string& address, const TlsClientPem* tls) {
  if (rpc_error.code() != absl::StatusCode::kUnavailable) return rpc_error;
  const absl::Status cause = DiagnoseTlsConnection(address, tls, kDefaultTlsDiagnosisTimeout);
  if (cause.ok()) return rpc_error;
  const bool retry_may_help = cause.code() == absl::StatusCode::kUnavailable ||
                              cause.code() == absl::StatusCode::kDeadlineExceeded;
  return absl::Status(retry_may_help ? rpc_error.code() : cause.code(),
                      absl::StrCat(rpc_error.message(), "; cause: ", cause.message()));
}

}  // namespace tunefleet
