#include "rpc/test_certs.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace tunefleet {
namespace {

template <auto Free>
struct OpenSslDeleter {
  template <typename T>
  void operator()(T* pointer) const {
    Free(pointer);
  }
};
using KeyPtr = std::unique_ptr<EVP_PKEY, OpenSslDeleter<EVP_PKEY_free>>;
using CertPtr = std::unique_ptr<X509, OpenSslDeleter<X509_free>>;
using BioPtr = std::unique_ptr<BIO, OpenSslDeleter<BIO_free>>;

constexpr int64_t kDayS = 24 * 60 * 60;

// Internal naming `what` and OpenSSL's queued errors (which it clears).
[[nodiscard]] absl::Status OpenSslError(absl::string_view what) {
  std::string detail;
  while (unsigned long code = ERR_get_error()) {
    char text[256];
    ERR_error_string_n(code, text, sizeof(text));
    absl::StrAppend(&detail, detail.empty() ? "" : "; ", text);
  }
  return absl::InternalError(absl::StrCat("test PKI: ", what, " failed: ", detail));
}

struct Issued {
  KeyPtr key;
  CertPtr cert;
};

struct CertSpec {
  std::string common_name;
  std::string subject_alt_names;  // OpenSSL config syntax; "" = none
  bool is_ca = false;
  int64_t not_before_s = -kDayS;  // relative to now
  int64_t not_after_s = 365 * kDayS;
};

[[nodiscard]] absl::Status AddExtension(X509* cert, X509V3_CTX* context, int nid,
                                        const std::string& value) {
  X509_EXTENSION* extension = X509V3_EXT_conf_nid(nullptr, context, nid, value.c_str());
  if (extension == nullptr) return OpenSslError(absl::StrCat("extension ", value));
  const int added = X509_add_ext(cert, extension, -1);
  X509_EXTENSION_free(extension);
  if (added != 1) return OpenSslError(absl::StrCat("adding extension ", value));
  return absl::OkStatus();
}

// A fresh key and a certificate for it, signed by `issuer` (nullptr:
// self-signed).
[[nodiscard]] absl::StatusOr<Issued> Issue(const CertSpec& spec, const Issued* issuer,
                                           int64_t serial) {
  Issued issued;
  issued.key.reset(EVP_EC_gen("P-256"));
  if (issued.key == nullptr) return OpenSslError("P-256 key generation");
  issued.cert.reset(X509_new());
  X509* cert = issued.cert.get();
  if (cert == nullptr || X509_set_version(cert, 2) != 1 ||
      ASN1_INTEGER_set(X509_get_serialNumber(cert), static_cast<long>(serial)) != 1 ||
      X509_gmtime_adj(X509_getm_notBefore(cert), static_cast<long>(spec.not_before_s)) == nullptr ||
      X509_gmtime_adj(X509_getm_notAfter(cert), static_cast<long>(spec.not_after_s)) == nullptr ||
      X509_set_pubkey(cert, issued.key.get()) != 1) {
    return OpenSslError(absl::StrCat("certificate fields for ", spec.common_name));
  }
  X509_NAME* subject = X509_get_subject_name(cert);
  if (X509_NAME_add_entry_by_txt(subject, "O", MBSTRING_ASC,
                                 reinterpret_cast<const unsigned char*>("TuneFleet tests"), -1, -1,
                                 0) != 1 ||
      X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_ASC,
                                 reinterpret_cast<const unsigned char*>(spec.common_name.c_str()),
                                 -1, -1, 0) != 1 ||
      X509_set_issuer_name(
          cert, issuer != nullptr ? X509_get_subject_name(issuer->cert.get()) : subject) != 1) {
    return OpenSslError(absl::StrCat("names for ", spec.common_name));
  }

  X509V3_CTX context;
  X509V3_set_ctx_nodb(&context);
  X509V3_set_ctx(&context, issuer != nullptr ? issuer->cert.get() : cert, cert, nullptr, nullptr,
                 0);
  TF_RETURN_IF_ERROR(AddExtension(cert, &context, NID_basic_constraints,
                                  spec.is_ca ? "critical,CA:TRUE" : "critical,CA:FALSE"));
  TF_RETURN_IF_ERROR(AddExtension(
      cert, &context, NID_key_usage,
      spec.is_ca ? "critical,keyCertSign,cRLSign" : "critical,digitalSignature,keyEncipherment"));
  TF_RETURN_IF_ERROR(AddExtension(cert, &context, NID_subject_key_identifier, "hash"));
  if (!spec.is_ca) {
    TF_RETURN_IF_ERROR(AddExtension(cert, &context, NID_ext_key_usage, "serverAuth,clientAuth"));
    TF_RETURN_IF_ERROR(AddExtension(cert, &context, NID_authority_key_identifier, "keyid:always"));
  }
  if (!spec.subject_alt_names.empty()) {
    TF_RETURN_IF_ERROR(AddExtension(cert, &context, NID_subject_alt_name, spec.subject_alt_names));
  }
  EVP_PKEY* signing_key = issuer != nullptr ? issuer->key.get() : issued.key.get();
  if (X509_sign(cert, signing_key, EVP_sha256()) == 0) {
    return OpenSslError(absl::StrCat("signing ", spec.common_name));
  }
  return issued;
}

[[nodiscard]] absl::StatusOr<std::string> BioContents(BIO* bio) {
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio, &data);
  if (size <= 0 || data == nullptr) return OpenSslError("PEM encoding");
  return std::string(data, static_cast<size_t>(size));
}

[[nodiscard]] absl::StatusOr<std::string> CertPem(const X509* cert) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (bio == nullptr || PEM_write_bio_X509(bio.get(), const_cast<X509*>(cert)) != 1) {
    return OpenSslError("certificate PEM");
  }
  return BioContents(bio.get());
}

[[nodiscard]] absl::StatusOr<TestCertAndKey> Pem(const Issued& issued) {
  TestCertAndKey pem;
  TF_ASSIGN_OR_RETURN(pem.cert_pem, CertPem(issued.cert.get()));
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (bio == nullptr || PEM_write_bio_PrivateKey(bio.get(), issued.key.get(), nullptr, nullptr, 0,
                                                 nullptr, nullptr) != 1) {
    return OpenSslError("key PEM");
  }
  TF_ASSIGN_OR_RETURN(pem.key_pem, BioContents(bio.get()));
  return pem;
}

// Issues a leaf certificate and returns it as PEM.
[[nodiscard]] absl::StatusOr<TestCertAndKey> Leaf(const CertSpec& spec, const Issued& issuer,
                                                  int64_t serial) {
  TF_ASSIGN_OR_RETURN(Issued leaf, Issue(spec, &issuer, serial));
  return Pem(leaf);
}

}  // namespace

[[nodiscard]] absl::StatusOr<TestPki> GenerateTestPki() {
  const std::string kServerNames = "IP:127.0.0.1,DNS:localhost";
  TestPki pki;
  TF_ASSIGN_OR_RETURN(
      Issued ca,
      Issue({"TuneFleet test CA", "", /*is_ca=*/true, -kDayS, 10 * 365 * kDayS}, nullptr, 1));
  TF_ASSIGN_OR_RETURN(
      Issued other_ca,
      Issue({"Other test CA", "", /*is_ca=*/true, -kDayS, 10 * 365 * kDayS}, nullptr, 2));
  TF_ASSIGN_OR_RETURN(pki.ca_pem, CertPem(ca.cert.get()));
  TF_ASSIGN_OR_RETURN(pki.other_ca_pem, CertPem(other_ca.cert.get()));

  TF_ASSIGN_OR_RETURN(pki.server, Leaf({"tracker", kServerNames}, ca, 10));
  TF_ASSIGN_OR_RETURN(pki.expired_server,
                      Leaf({"expired tracker", kServerNames, false, -10 * kDayS, -kDayS}, ca, 11));
  TF_ASSIGN_OR_RETURN(pki.not_yet_valid_server,
                      Leaf({"future tracker", kServerNames, false, kDayS, 365 * kDayS}, ca, 12));
  TF_ASSIGN_OR_RETURN(pki.other_name_server,
                      Leaf({"other tracker", absl::StrCat("DNS:", kTestOtherServerName)}, ca, 13));
  TF_ASSIGN_OR_RETURN(pki.foreign_server, Leaf({"foreign tracker", kServerNames}, other_ca, 14));

  TF_ASSIGN_OR_RETURN(pki.client,
                      Leaf({"board-7", absl::StrCat("URI:", kTestClientIdentity)}, ca, 20));
  TF_ASSIGN_OR_RETURN(pki.other_client,
                      Leaf({"board-8", absl::StrCat("URI:", kTestOtherClientIdentity)}, ca, 21));
  TF_ASSIGN_OR_RETURN(
      pki.foreign_client,
      Leaf({"foreign board-7", absl::StrCat("URI:", kTestClientIdentity)}, other_ca, 22));
  return pki;
}

}  // namespace tunefleet
