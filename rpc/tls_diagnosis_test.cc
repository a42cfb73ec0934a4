#include "rpc/tls_diagnosis.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "common/file_util.h"
#include "gmock/gmock.h"
#include "grpcpp/generic/async_generic_service.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "rpc/generic_call.h"
#include "rpc/grpc_status.h"
#include "rpc/test_certs.h"

namespace tunefleet {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr absl::Duration kTimeout = absl::Seconds(10);

// Answers every call with an empty message.
class EmptyService final : public grpc::CallbackGenericService {
 public:
  grpc::ServerGenericBidiReactor* CreateReactor(grpc::GenericCallbackServerContext*) override {
    class Reactor final : public grpc::ServerGenericBidiReactor {
     public:
      Reactor() {
        grpc::Slice empty{std::string()};
        response_ = grpc::ByteBuffer(&empty, 1);
        StartWriteAndFinish(&response_, grpc::WriteOptions(), grpc::Status::OK);
      }
      void OnDone() override { delete this; }

     private:
      grpc::ByteBuffer response_;
    };
    return new Reactor();
  }
};

std::shared_ptr<grpc::ServerCredentials> TlsServer(const TestCertAndKey& server,
                                                   const std::string& client_ca = "") {
  grpc::SslServerCredentialsOptions ssl(
      client_ca.empty() ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
                        : GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  ssl.pem_root_certs = client_ca;
  ssl.pem_key_cert_pairs.push_back({server.key_pem, server.cert_pem});
  return grpc::SslServerCredentials(ssl);
}

TlsClientPem Client(const std::string& ca, const TestCertAndKey* cert = nullptr) {
  TlsClientPem pem;
  pem.ca = ca;
  if (cert != nullptr) {
    pem.cert = cert->cert_pem;
    pem.key = cert->key_pem;
  }
  return pem;
}

class TlsDiagnosisTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    absl::StatusOr<TestPki> pki = GenerateTestPki();
    ASSERT_TRUE(pki.ok()) << pki.status();
    pki_ = new TestPki(*std::move(pki));
  }
  static void TearDownTestSuite() { delete pki_; }

  void StartServer(std::shared_ptr<grpc::ServerCredentials> credentials) {
    server_ = StartGenericServer(std::move(credentials), &service_, &address_);
    ASSERT_NE(server_, nullptr);
  }
  void TearDown() override {
    if (server_ != nullptr) server_->Shutdown();
  }

  // One unary call the way our clients make it; its status.
  [[nodiscard]] absl::Status GrpcCall(const TlsClientPem* tls) {
    std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials();
    if (tls != nullptr) {
      grpc::SslCredentialsOptions ssl;
      ssl.pem_root_certs = tls->ca;
      ssl.pem_cert_chain = tls->cert;
      ssl.pem_private_key = tls->key;
      credentials = grpc::SslCredentials(ssl);
    }
    grpc::ChannelArguments arguments;
    arguments.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    return UnaryGenericCall(grpc::CreateCustomChannel(address_, credentials, arguments),
                            "/tunefleet.test.Empty/Call")
        .status();
  }

  // The diagnosis names `cause` with `code`; gRPC's own error for the same
  // connection is Unavailable and does not; ExplainUnavailable adds it.
  void ExpectCause(const TlsClientPem* tls, absl::StatusCode code, const std::string& cause) {
    const absl::Status diagnosis = DiagnoseTlsConnection(address_, tls, kTimeout);
    std::cout << "diagnosis: " << diagnosis << "\n";
    EXPECT_EQ(diagnosis.code(), code) << diagnosis;
    EXPECT_THAT(diagnosis.message(), HasSubstr(cause));

    const absl::Status grpc_error = GrpcCall(tls);
    std::cout << "gRPC said: " << grpc_error << "\n";
    ASSERT_EQ(grpc_error.code(), absl::StatusCode::kUnavailable) << grpc_error;
    EXPECT_THAT(grpc_error.message(), Not(HasSubstr(cause)));

    const absl::Status explained = ExplainUnavailable(grpc_error, address_, tls);
    std::cout << "explained: " << explained << "\n";
    EXPECT_EQ(explained.code(),
              code == absl::StatusCode::kUnavailable ? absl::StatusCode::kUnavailable : code);
    EXPECT_THAT(explained.message(),
                AllOf(HasSubstr(std::string(grpc_error.message())), HasSubstr(cause)));
  }

  static TestPki* pki_;
  EmptyService service_;
  std::unique_ptr<grpc::Server> server_;
  std::string address_;
};

TestPki* TlsDiagnosisTest::pki_ = nullptr;

TEST_F(TlsDiagnosisTest, HealthyTlsIsOk) {
  StartServer(TlsServer(pki_->server));
  const TlsClientPem tls = Client(pki_->ca_pem);
  EXPECT_TRUE(DiagnoseTlsConnection(address_, &tls, kTimeout).ok());
  EXPECT_TRUE(GrpcCall(&tls).ok());
}

TEST_F(TlsDiagnosisTest, HealthyTlsByHostNameIsOk) {
  StartServer(TlsServer(pki_->server));
  address_ = absl::StrCat("localhost", address_.substr(address_.rfind(':')));
  const TlsClientPem tls = Client(pki_->ca_pem);
  const absl::Status diagnosis = DiagnoseTlsConnection(address_, &tls, kTimeout);
  EXPECT_TRUE(diagnosis.ok()) << diagnosis;
}

TEST_F(TlsDiagnosisTest, HealthyMutualTlsIsOk) {
  StartServer(TlsServer(pki_->server, pki_->ca_pem));
  const TlsClientPem tls = Client(pki_->ca_pem, &pki_->client);
  const absl::Status diagnosis = DiagnoseTlsConnection(address_, &tls, kTimeout);
  EXPECT_TRUE(diagnosis.ok()) << diagnosis;
  EXPECT_TRUE(GrpcCall(&tls).ok());
}

TEST_F(TlsDiagnosisTest, HealthyPlaintextIsOk) {
  StartServer(grpc::InsecureServerCredentials());
  const absl::Status diagnosis = DiagnoseTlsConnection(address_, nullptr, kTimeout);
  EXPECT_TRUE(diagnosis.ok()) << diagnosis;
  EXPECT_TRUE(GrpcCall(nullptr).ok());
}

TEST_F(TlsDiagnosisTest, NamesAServerCertificateFromAnotherCa) {
  StartServer(TlsServer(pki_->foreign_server));
  const TlsClientPem tls = Client(pki_->ca_pem);
  ExpectCause(&tls, absl::StatusCode::kFailedPrecondition,
              "the tracker's certificate is not signed by the CA in --tls_ca");
  EXPECT_THAT(DiagnoseTlsConnection(address_, &tls, kTimeout).message(),
              AllOf(HasSubstr("issuer: O = TuneFleet tests, CN = Other test CA"),
                    HasSubstr("--tls_ca holds O = TuneFleet tests, CN = TuneFleet test CA")));
}

TEST_F(TlsDiagnosisTest, NamesAnExpiredServerCertificate) {
  StartServer(TlsServer(pki_->expired_server));
  const TlsClientPem tls = Client(pki_->ca_pem);
  ExpectCause(&tls, absl::StatusCode::kFailedPrecondition, "the tracker's certificate expired on");
}

TEST_F(TlsDiagnosisTest, NamesAServerCertificateNotYetValid) {
  StartServer(TlsServer(pki_->not_yet_valid_server));
  const TlsClientPem tls = Client(pki_->ca_pem);
  ExpectCause(&tls, absl::StatusCode::kFailedPrecondition,
              "the tracker's certificate is not valid before");
}

TEST_F(TlsDiagnosisTest, NamesACertificateForAnotherName) {
  StartServer(TlsServer(pki_->other_name_server));
  const TlsClientPem tls = Client(pki_->ca_pem);
  ExpectCause(&tls, absl::StatusCode::kFailedPrecondition,
              "the tracker's certificate is for DNS:tracker.other.example but the address is "
              "127.0.0.1");
}

TEST_F(TlsDiagnosisTest, NamesAPlaintextServerForATlsClient) {
  StartServer(grpc::InsecureServerCredentials());
  const TlsClientPem tls = Client(pki_->ca_pem);
  ExpectCause(&tls, absl::StatusCode::kFailedPrecondition,
              "does not speak TLS (plaintext server) but this client uses --tls_ca");
}

TEST_F(TlsDiagnosisTest, NamesATlsServerForAPlaintextClient) {
  StartServer(TlsServer(pki_->server));
  ExpectCause(nullptr, absl::StatusCode::kFailedPrecondition,
              "speaks TLS but this client is plaintext: pass --tls_ca");
}

TEST_F(TlsDiagnosisTest, NamesAMissingClientCertificate) {
  StartServer(TlsServer(pki_->server, pki_->ca_pem));
  const TlsClientPem tls = Client(pki_->ca_pem);
  ExpectCause(&tls, absl::StatusCode::kUnauthenticated,
              "requires a client certificate: pass --tls_cert and --tls_key");
}

TEST_F(TlsDiagnosisTest, NamesAClientCertificateFromAnotherCa) {
  StartServer(TlsServer(pki_->server, pki_->ca_pem));
  const TlsClientPem tls = Client(pki_->ca_pem, &pki_->foreign_client);
  ExpectCause(&tls, absl::StatusCode::kUnauthenticated, "refused this client's certificate");
  EXPECT_THAT(DiagnoseTlsConnection(address_, &tls, kTimeout).message(),
              AllOf(HasSubstr("is it signed by the tracker's --tls_client_ca?"),
                    HasSubstr("--tls_cert: issuer: O = TuneFleet tests, CN = Other test CA")));
}

TEST_F(TlsDiagnosisTest, NamesAPortNobodyListensOn) {
  // A bound socket that does not listen: connecting to it is refused.
  const int holder = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(holder, 0);
  sockaddr_in bound{};
  bound.sin_family = AF_INET;
  bound.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(bound);
  ASSERT_EQ(bind(holder, reinterpret_cast<sockaddr*>(&bound), sizeof(bound)), 0);
  ASSERT_EQ(getsockname(holder, reinterpret_cast<sockaddr*>(&bound), &length), 0);
  address_ = absl::StrCat("127.0.0.1:", ntohs(bound.sin_port));
  const TlsClientPem tls = Client(pki_->ca_pem);
  const absl::Status diagnosis = DiagnoseTlsConnection(address_, &tls, kTimeout);
  EXPECT_EQ(diagnosis.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(diagnosis.message(), AllOf(HasSubstr("cannot connect to the tracker at " + address_),
                                         HasSubstr("Connection refused (errno 111)")));
  const absl::Status explained =
      ExplainUnavailable(absl::UnavailableError("failed to connect"), address_, &tls);
  EXPECT_EQ(explained.code(), absl::StatusCode::kUnavailable);  // a retry may help
  EXPECT_THAT(explained.message(), HasSubstr("Connection refused"));
  close(holder);
}

TEST_F(TlsDiagnosisTest, ExplainUnavailableLeavesOtherErrorsAndHealthyConnectionsAlone) {
  StartServer(TlsServer(pki_->server));
  const TlsClientPem tls = Client(pki_->ca_pem);
  const absl::Status denied = absl::PermissionDeniedError("no");
  EXPECT_EQ(ExplainUnavailable(denied, address_, &tls), denied);
  const absl::Status unavailable = absl::UnavailableError("tracker restarting");
  EXPECT_EQ(ExplainUnavailable(unavailable, address_, &tls), unavailable);
}

TEST_F(TlsDiagnosisTest, RefusesAKeyThatDoesNotGoWithTheCertificate) {
  StartServer(TlsServer(pki_->server, pki_->ca_pem));
  TlsClientPem tls = Client(pki_->ca_pem, &pki_->client);
  tls.key = pki_->other_client.key_pem;
  const absl::Status diagnosis = DiagnoseTlsConnection(address_, &tls, kTimeout);
  EXPECT_EQ(diagnosis.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(diagnosis.message(), HasSubstr("--tls_key does not go with --tls_cert"));

  const TlsClientPem no_ca = Client("", &pki_->client);
  EXPECT_EQ(DiagnoseTlsConnection(address_, &no_ca, kTimeout).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(LoadTlsClientPemTest, ReadsTheThreeFilesWithTheCredentialRules) {
  const std::string dir = std::getenv("TEST_TMPDIR");
  ASSERT_TRUE(ReplaceFileAtomically(dir + "/ca.pem", "CA PEM").ok());
  ASSERT_TRUE(ReplaceFileAtomically(dir + "/cert.pem", "CERT PEM").ok());
  ASSERT_TRUE(ReplaceFileAtomically(dir + "/key.pem", "KEY PEM", 0600).ok());

  absl::StatusOr<std::unique_ptr<TlsClientPem>> plaintext = LoadTlsClientPem("", "", "");
  ASSERT_TRUE(plaintext.ok()) << plaintext.status();
  EXPECT_EQ(*plaintext, nullptr);

  absl::StatusOr<std::unique_ptr<TlsClientPem>> full =
      LoadTlsClientPem(dir + "/ca.pem", dir + "/cert.pem", dir + "/key.pem");
  ASSERT_TRUE(full.ok()) << full.status();
  EXPECT_EQ((*full)->ca, "CA PEM");
  EXPECT_EQ((*full)->cert, "CERT PEM");
  EXPECT_EQ((*full)->key, "KEY PEM");

  EXPECT_EQ(LoadTlsClientPem("", dir + "/cert.pem", dir + "/key.pem").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(LoadTlsClientPem(dir + "/ca.pem", dir + "/cert.pem", "").status().code(),
            absl::StatusCode::kInvalidArgument);
  const absl::Status missing = LoadTlsClientPem(dir + "/nope.pem", "", "").status();
  EXPECT_EQ(missing.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.message(), HasSubstr("nope.pem"));
}

}  // namespace
}  // namespace tunefleet
