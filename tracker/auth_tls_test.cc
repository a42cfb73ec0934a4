// Token binding to a client certificate identity, end to end over real TLS:
// a gRPC server on 127.0.0.1 that requires client certificates signed by
// the fleet CA, and a token bound to spiffe://fleet/agent/board-7.
#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/support/byte_buffer.h>

#include <chrono>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rpc/grpc_status.h"
#include "rpc/test_certs.h"
#include "tracker/auth.h"

namespace tunefleet {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr char kAgentToken[] = "agent-token-bound-0123456789";

// Answers each call with the caller's role name, or AuthenticateContext's
// error.
class WhoAmIService final : public grpc::CallbackGenericService {
 public:
  explicit WhoAmIService(const TokenSet* tokens) : tokens_(tokens) {}

  grpc::ServerGenericBidiReactor* CreateReactor(
      grpc::GenericCallbackServerContext* context) override {
    class Reactor final : public grpc::ServerGenericBidiReactor {
     public:
      explicit Reactor(absl::StatusOr<Principal> who) {
        if (!who.ok()) {
          Finish(ToGrpc(who.status()));
          return;
        }
        grpc::Slice slice{std::string(RoleName(who->role))};
        response_ = grpc::ByteBuffer(&slice, 1);
        StartWriteAndFinish(&response_, grpc::WriteOptions(), grpc::Status::OK);
      }
      void OnDone() override { delete this; }

     private:
      grpc::ByteBuffer response_;
    };
    return new Reactor(AuthenticateContext(tokens_, *context));
  }

 private:
  const TokenSet* tokens_;
};

class AuthTlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<TestPki> pki = GenerateTestPki();
    ASSERT_TRUE(pki.ok()) << pki.status();
    pki_ = *std::move(pki);
    ASSERT_TRUE(tokens_.Add(Role::kAgent, kAgentToken, TokenScope{{}, kTestClientIdentity}).ok());

    service_ = std::make_unique<WhoAmIService>(&tokens_);
    grpc::SslServerCredentialsOptions ssl(
        GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
    ssl.pem_root_certs = pki_.ca_pem;  // the tracker's --tls_client_ca
    ssl.pem_key_cert_pairs.push_back({pki_.server.key_pem, pki_.server.cert_pem});
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::SslServerCredentials(ssl), &port);
    builder.RegisterCallbackGenericService(service_.get());
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    ASSERT_GT(port, 0);
    address_ = absl::StrCat("127.0.0.1:", port);
  }
  void TearDown() override {
    if (server_ != nullptr) server_->Shutdown();
  }

  // The role the server saw for a TLS client presenting `cert` and the
  // bound token, or the call's status.
  [[nodiscard]] absl::StatusOr<std::string> CallAs(const TestCertAndKey& cert) {
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = pki_.ca_pem;
    ssl.pem_cert_chain = cert.cert_pem;
    ssl.pem_private_key = cert.key_pem;
    grpc::ChannelArguments arguments;
    arguments.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    grpc::GenericStub stub(
        grpc::CreateCustomChannel(address_, grpc::SslCredentials(ssl), arguments));
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    context.AddMetadata(kAuthorizationMetadataKey, BearerHeader(kAgentToken));
    grpc::Slice empty{std::string()};
    grpc::ByteBuffer request(&empty, 1);
    grpc::ByteBuffer response;
    grpc::Status status;
    absl::Notification done;
    stub.UnaryCall(&context, "/tunefleet.test.WhoAmI/Call", grpc::StubOptions(), &request,
                   &response, [&](grpc::Status s) {
                     status = std::move(s);
                     done.Notify();
                   });
    done.WaitForNotification();
    if (!status.ok()) return FromGrpc(status);
    std::vector<grpc::Slice> slices;
    if (!response.Dump(&slices).ok()) return absl::InternalError("response does not dump");
    std::string text;
    for (const grpc::Slice& slice : slices) {
      text.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
    }
    return text;
  }

  TestPki pki_;
  TokenSet tokens_;
  std::unique_ptr<WhoAmIService> service_;
  std::unique_ptr<grpc::Server> server_;
  std::string address_;
};

TEST_F(AuthTlsTest, AcceptsABoundTokenFromTheClientWithItsCertificate) {
  absl::StatusOr<std::string> role = CallAs(pki_.client);
  ASSERT_TRUE(role.ok()) << role.status();
  EXPECT_EQ(*role, "agent");
}

TEST_F(AuthTlsTest, RefusesABoundTokenFromAnotherValidCertificate) {
  absl::StatusOr<std::string> role = CallAs(pki_.other_client);
  ASSERT_FALSE(role.ok());
  std::cout << "board-8 with board-7's token: " << role.status() << "\n";
  EXPECT_EQ(role.status().code(), absl::StatusCode::kPermissionDenied) << role.status();
  EXPECT_THAT(role.status().message(),
              AllOf(HasSubstr(absl::StrCat("bound to the client certificate identity ",
                                           kTestClientIdentity)),
                    HasSubstr(kTestOtherClientIdentity)));
}

}  // namespace
}  // namespace tunefleet
