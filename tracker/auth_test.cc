#include "tracker/auth.h"

#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/support/byte_buffer.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rpc/generic_call.h"
#include "rpc/grpc_status.h"
#include "rpc/test_certs.h"

namespace tunefleet {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kUserToken[] = "user-token-0123456789";
constexpr char kAgentToken[] = "agent-token-0123456789";
constexpr char kAdminToken[] = "admin-token-0123456789";

std::string TempPath(const std::string& name) {
  const char* base = getenv("TEST_TMPDIR");
  return absl::StrCat(base != nullptr ? base : "/tmp", "/", name);
}

// Writes a file with the given mode (chmod'ed after writing, so the umask
// does not matter).
std::string WriteFile(const std::string& name, const std::string& text, mode_t mode = 0600) {
  const std::string path = TempPath(name);
  {
    std::ofstream out(path, std::ios::trunc);
    out << text;
  }
  EXPECT_EQ(chmod(path.c_str(), mode), 0);
  return path;
}

TokenSet ThreeTokens() {
  TokenSet tokens;
  EXPECT_TRUE(tokens.Add(Role::kUser, kUserToken).ok());
  EXPECT_TRUE(tokens.Add(Role::kAgent, kAgentToken).ok());
  EXPECT_TRUE(tokens.Add(Role::kAdmin, kAdminToken).ok());
  return tokens;
}

// ---------------------------------------------------------------- roles

constexpr Action kEveryAction[] = {Action::kSubmit,        Action::kQuery,
                                   Action::kCancel,        Action::kRegisterBuilder,
                                   Action::kRegisterAgent, Action::kRegisterTuner};

// The actions `role` may take, in kEveryAction's order.
std::vector<Action> AllowedActions(Role role) {
  std::vector<Action> allowed;
  for (Action action : kEveryAction) {
    if (Allowed(role, action)) allowed.push_back(action);
  }
  return allowed;
}

TEST(AllowedTest, AdminMayDoEverything) {
  EXPECT_THAT(AllowedActions(Role::kAdmin), ::testing::ElementsAreArray(kEveryAction));
}

TEST(AllowedTest, UserMaySubmitQueryAndCancelButNotRegister) {
  EXPECT_THAT(AllowedActions(Role::kUser),
              ::testing::ElementsAre(Action::kSubmit, Action::kQuery, Action::kCancel));
}

TEST(AllowedTest, WorkersRegisterOnlyAsThemselves) {
  EXPECT_THAT(AllowedActions(Role::kBuilder), ::testing::ElementsAre(Action::kRegisterBuilder));
  EXPECT_THAT(AllowedActions(Role::kAgent), ::testing::ElementsAre(Action::kRegisterAgent));
  EXPECT_THAT(AllowedActions(Role::kTuner), ::testing::ElementsAre(Action::kRegisterTuner));
}

TEST(RoleTest, NamesRoundTrip) {
  for (Role role : {Role::kUser, Role::kBuilder, Role::kAgent, Role::kTuner, Role::kAdmin}) {
    auto parsed = ParseRole(RoleName(role));
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(*parsed, role);
  }
  EXPECT_FALSE(ParseRole("root").ok());
}

// ---------------------------------------------------------------- tokens

TEST(TokenSetTest, AuthenticatesEachRolesToken) {
  TokenSet tokens = ThreeTokens();
  auto user = tokens.Authenticate(BearerHeader(kUserToken));
  ASSERT_TRUE(user.ok()) << user.status();
  EXPECT_EQ(user->role, Role::kUser);
  auto agent = tokens.Authenticate(absl::StrCat("bearer  ", kAgentToken, " "));
  ASSERT_TRUE(agent.ok()) << agent.status();
  EXPECT_EQ(agent->role, Role::kAgent);
  auto admin = tokens.Authenticate(BearerHeader(kAdminToken));
  ASSERT_TRUE(admin.ok()) << admin.status();
  EXPECT_EQ(admin->role, Role::kAdmin);
}

TEST(TokenSetTest, RefusesUnknownTokensWithoutEchoingThem) {
  TokenSet tokens = ThreeTokens();
  const std::string guess = "user-token-0123456780";  // one character off
  auto role = tokens.Authenticate(BearerHeader(guess));
  ASSERT_FALSE(role.ok());
  EXPECT_EQ(role.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_THAT(role.status().message(), HasSubstr("not recognized"));
  EXPECT_THAT(role.status().message(), Not(HasSubstr(guess)));

  // A prefix or an extension of a real token is not that token.
  EXPECT_FALSE(tokens.Authenticate(BearerHeader("user-token-012345678")).ok());
  EXPECT_FALSE(tokens.Authenticate(BearerHeader(absl::StrCat(kUserToken, "9"))).ok());
}

// Each new token of a shape that matches id-less lines costs Argon2 (64
// MiB): one peer gets a few, then is told to wait, without hashing; a token
// already verified and tf_-shaped tokens (checked against their own line
// only) are not rationed, and other peers keep their share.
TEST(TokenSetTest, UnknownTokensAreRationedPerPeer) {
  TokenSet tokens = ThreeTokens();
  FakeClock clock;  // stands still: hashing time refills nothing
  tokens.set_clock(&clock);
  ASSERT_TRUE(tokens.Authenticate(BearerHeader(kUserToken), "ipv4:10.0.0.9:1").ok());
  const std::string attacker = "ipv4:10.0.0.5:";
  int refused = 0, exhausted = 0;
  for (int i = 0; i < 12; ++i) {
    const absl::Status status =
        tokens
            .Authenticate(BearerHeader(absl::StrCat("guess-number-", i, "-abcdefgh")),
                          absl::StrCat(attacker, 40000 + i))
            .status();
    if (status.code() == absl::StatusCode::kUnauthenticated) ++refused;
    if (status.code() == absl::StatusCode::kResourceExhausted) {
      ++exhausted;
      EXPECT_THAT(status.message(), HasSubstr("ipv4:10.0.0.5"));
    }
  }
  EXPECT_EQ(refused, static_cast<int>(TokenSet::kArgon2PerPeerBurst));
  EXPECT_EQ(exhausted, 12 - refused);
  // A second later the peer may fail once more, and no more than once.
  clock.AdvanceSeconds(1);
  EXPECT_EQ(tokens.Authenticate(BearerHeader("guess-after-a-second-abcdefgh"), attacker + "3")
                .status()
                .code(),
            absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(tokens.Authenticate(BearerHeader("guess-after-a-second-bcdefghi"), attacker + "4")
                .status()
                .code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(tokens
                .Authenticate(BearerHeader("tf_0123456789abcdef_0123456789abcdef01234567"),
                              attacker + "1")
                .status()
                .code(),
            absl::StatusCode::kUnauthenticated);
  EXPECT_TRUE(tokens.Authenticate(BearerHeader(kUserToken), attacker + "2").ok());
  EXPECT_EQ(tokens.Authenticate(BearerHeader("another-guess-abcdefgh"), "ipv4:10.0.0.6:3")
                .status()
                .code(),
            absl::StatusCode::kUnauthenticated);
}

TEST(TokenSetTest, RefusesMissingOrMalformedHeaders) {
  TokenSet tokens = ThreeTokens();
  for (const std::string& header :
       {std::string(""), std::string("   "), std::string(kUserToken),
        absl::StrCat("Basic ", kUserToken), std::string("Bearer "), std::string("Bearer")}) {
    auto role = tokens.Authenticate(header);
    ASSERT_FALSE(role.ok()) << "header '" << header << "'";
    EXPECT_EQ(role.status().code(), absl::StatusCode::kUnauthenticated);
    EXPECT_THAT(role.status().message(), Not(HasSubstr(kUserToken)));
  }
  EXPECT_THAT(tokens.Authenticate("").status().message(), HasSubstr("Bearer <token>"));
}

TEST(TokenSetTest, EmptySetAuthenticatesNobody) {
  TokenSet tokens;
  EXPECT_FALSE(tokens.Authenticate(BearerHeader(kAdminToken)).ok());
}

TEST(TokenSetTest, AddRefusesShortDuplicateAndWhitespaceTokens) {
  TokenSet tokens;
  absl::Status short_token = tokens.Add(Role::kUser, "short");
  EXPECT_EQ(short_token.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(short_token.message(), HasSubstr("at least 16"));
  EXPECT_TRUE(tokens.Add(Role::kUser, kUserToken).ok());
  EXPECT_FALSE(tokens.Add(Role::kAdmin, kUserToken).ok());
  EXPECT_FALSE(tokens.Add(Role::kUser, "has a space in the middle").ok());
}

TEST(TokenSetTest, GenerateMakesDistinctLongTokensWithAnIdForEveryRole) {
  auto first = TokenSet::Generate();
  ASSERT_TRUE(first.ok()) << first.status();
  auto second = TokenSet::Generate();
  ASSERT_TRUE(second.ok()) << second.status();
  for (Role role : {Role::kUser, Role::kBuilder, Role::kAgent, Role::kTuner, Role::kAdmin}) {
    const std::string token = first->TokenFor(role);
    // "tf_" + 16 hex id + "_" + 64 hex secret.
    ASSERT_EQ(token.size(), 84u) << token;
    EXPECT_EQ(token.substr(0, 3), "tf_");
    EXPECT_EQ(token[19], '_');
    EXPECT_EQ(token.find_first_not_of("0123456789abcdef", 20), std::string::npos) << token;
    EXPECT_NE(token, second->TokenFor(role));
    auto authenticated = first->Authenticate(BearerHeader(token));
    ASSERT_TRUE(authenticated.ok()) << authenticated.status();
    EXPECT_EQ(authenticated->role, role);
  }
}

// ---------------------------------------------------------------- files

TEST(TokenFileTest, WrittenFileIsPrivateAndLoadsBack) {
  auto generated = TokenSet::Generate();
  ASSERT_TRUE(generated.ok()) << generated.status();
  const std::string path = TempPath("written_tokens");
  ASSERT_TRUE(generated->WriteTokenFile(path).ok());

  struct stat info;
  ASSERT_EQ(stat(path.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600u);

  auto loaded = LoadTokenFile(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->size(), 5u);
  auto tuner = loaded->Authenticate(BearerHeader(generated->TokenFor(Role::kTuner)));
  ASSERT_TRUE(tuner.ok()) << tuner.status();
  EXPECT_EQ(tuner->role, Role::kTuner);

  // Writing again replaces the file.
  ASSERT_TRUE(ThreeTokens().WriteTokenFile(path).ok());
  auto replaced = LoadTokenFile(path);
  ASSERT_TRUE(replaced.ok()) << replaced.status();
  EXPECT_EQ(replaced->size(), 3u);
}

// One line of a token file for `token`, hashed.
std::string Line(Role role, const std::string& token, const TokenScope& scope = {}) {
  absl::StatusOr<std::string> line = TokenFileLine(role, token, scope);
  EXPECT_TRUE(line.ok()) << line.status();
  return line.value_or("");
}

TEST(TokenFileTest, ReadsCommentsBlankLinesAndSeveralTokensPerRole) {
  const std::string path = WriteFile(
      "tokens_ok", absl::StrCat("# fleet tokens\n"
                                "\n",
                                Line(Role::kUser, kUserToken), "\n  ",
                                Line(Role::kAgent, "agent-board-1-0123456789"), "   # rk3399 #1\n",
                                Line(Role::kAgent, "agent-board-2-0123456789"), "\n",
                                Line(Role::kAdmin, kAdminToken)));  // no final newline
  auto tokens = LoadTokenFile(path);
  ASSERT_TRUE(tokens.ok()) << tokens.status();
  EXPECT_EQ(tokens->size(), 4u);
  auto board2 = tokens->Authenticate(BearerHeader("agent-board-2-0123456789"));
  ASSERT_TRUE(board2.ok()) << board2.status();
  EXPECT_EQ(board2->role, Role::kAgent);
  // Asking twice is answered from the verified-token cache, the same way.
  auto again = tokens->Authenticate(BearerHeader("agent-board-2-0123456789"));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->role, Role::kAgent);
  EXPECT_FALSE(tokens->Authenticate(BearerHeader("agent-board-3-0123456789")).ok());
  EXPECT_FALSE(tokens->Authenticate(BearerHeader("agent-board-3-0123456789")).ok());
}

TEST(TokenFileTest, StoresHashesAndNeverTheTokens) {
  auto generated = TokenSet::Generate();
  ASSERT_TRUE(generated.ok()) << generated.status();
  const std::string path = TempPath("hashed_tokens");
  ASSERT_TRUE(generated->WriteTokenFile(path).ok());
  std::ifstream in(path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (Role role : {Role::kUser, Role::kBuilder, Role::kAgent, Role::kTuner, Role::kAdmin}) {
    const std::string token = generated->TokenFor(role);
    EXPECT_THAT(text, Not(HasSubstr(token.substr(20)))) << "the secret of a token is in the file";
  }
  EXPECT_THAT(text, HasSubstr("$argon2id$"));
}

TEST(TokenFileTest, RefusesAPlaintextTokenAndSaysHowToHashIt) {
  const std::string path = WriteFile("tokens_plain", "user user-token-0123456789\n");
  auto tokens = LoadTokenFile(path);
  ASSERT_FALSE(tokens.ok());
  EXPECT_EQ(tokens.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(tokens.status().message(), HasSubstr("not an Argon2id hash"));
  EXPECT_THAT(tokens.status().message(), HasSubstr("tunefleet token hash --role user"));
  EXPECT_THAT(tokens.status().message(), Not(HasSubstr("0123456789")));
}

TEST(TokenFileTest, AgentTokensAreScopedToTheirDeviceKeys) {
  const std::string board_token = "rk3399-board-7-0123456789";
  const std::string path = WriteFile(
      "tokens_scoped", Line(Role::kAgent, board_token, TokenScope{{"rk3399", "rk3399-b"}, ""}));
  auto tokens = LoadTokenFile(path);
  ASSERT_TRUE(tokens.ok()) << tokens.status();
  auto who = tokens->Authenticate(BearerHeader(board_token));
  ASSERT_TRUE(who.ok()) << who.status();
  EXPECT_TRUE(who->CheckDeviceKey("rk3399").ok());
  EXPECT_TRUE(who->CheckDeviceKey("rk3399-b").ok());
  const absl::Status h100 = who->CheckDeviceKey("h100");
  EXPECT_TRUE(absl::IsPermissionDenied(h100)) << h100;
  EXPECT_THAT(h100.message(), HasSubstr("scoped to device keys rk3399, rk3399-b"));
  EXPECT_THAT(h100.message(), HasSubstr("cannot register as 'h100'"));

  // keys= is for agents only.
  const std::string user_scoped =
      WriteFile("tokens_user_scoped", Line(Role::kUser, kUserToken, TokenScope{{"rk3399"}, ""}));
  EXPECT_THAT(LoadTokenFile(user_scoped).status().message(), HasSubstr("agent tokens only"));
}

TEST(TokenFileTest, RefusesAGroupReadableFile) {
  const std::string path =
      WriteFile("tokens_group_readable", Line(Role::kAdmin, kAdminToken) + "\n", 0640);
  auto tokens = LoadTokenFile(path);
  ASSERT_FALSE(tokens.ok());
  EXPECT_EQ(tokens.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(tokens.status().message(), HasSubstr("readable by its group"));
  EXPECT_THAT(tokens.status().message(), HasSubstr("chmod 600"));
}

TEST(TokenFileTest, RefusesAWorldReadableFile) {
  const std::string path =
      WriteFile("tokens_world_readable", Line(Role::kAdmin, kAdminToken) + "\n", 0644);
  auto tokens = LoadTokenFile(path);
  ASSERT_FALSE(tokens.ok());
  EXPECT_EQ(tokens.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(tokens.status().message(), HasSubstr("chmod 600"));
  EXPECT_THAT(tokens.status().message(), HasSubstr(path));
}

TEST(TokenFileTest, ErrorsNameTheLineAndNeverTheToken) {
  struct Case {
    std::string text;
    std::string expected;
  };
  const std::string user_line = Line(Role::kUser, kUserToken);
  const std::string hash = user_line.substr(user_line.find(' ') + 1);
  const Case cases[] = {
      {absl::StrCat(user_line, "\nroot ", hash, "\n"), "line 2: unknown role 'root'"},
      {"# c\n\nagent tooshort-0123456789\n", "line 3: role agent: the credential is not an"},
      {"user\n", "line 1: expected '<role> <hash>"},
      {absl::StrCat("user ", hash, " extra\n"), "line 1: unknown attribute 'extra'"},
      {absl::StrCat("user ", hash, " id=00ff\nadmin ", hash, " id=00ff\n"),
       "line 2: token id 00ff is already given to role user"},
      {"# only comments\n\n", "holds no tokens"},
  };
  int index = 0;
  for (const Case& c : cases) {
    const std::string path = WriteFile(absl::StrCat("tokens_bad_", index++), c.text);
    auto tokens = LoadTokenFile(path);
    ASSERT_FALSE(tokens.ok()) << c.text;
    EXPECT_EQ(tokens.status().code(), absl::StatusCode::kInvalidArgument) << tokens.status();
    EXPECT_THAT(tokens.status().message(), HasSubstr(c.expected));
    EXPECT_THAT(tokens.status().message(), Not(HasSubstr("0123456789"))) << "a token leaked";
    EXPECT_THAT(tokens.status().message(), Not(HasSubstr("tooshort"))) << "a token leaked";
  }
}

TEST(TokenFileTest, MissingFileIsNotFound) {
  auto tokens = LoadTokenFile(TempPath("no_such_token_file"));
  ASSERT_FALSE(tokens.ok());
  EXPECT_EQ(tokens.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(tokens.status().message(), HasSubstr("no_such_token_file"));
}

// ---------------------------------------------------------------- gRPC

// Answers any method with the caller's role name, or fails the call with
// UNAUTHENTICATED and AuthenticateContext's message.
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

// Calls a WhoAmIService on `channel` with these authorization metadata
// values: the role name it answered, or the failed call's status.
[[nodiscard]] absl::StatusOr<std::string> CallWhoAmI(
    std::shared_ptr<grpc::Channel> channel, const std::vector<std::string>& authorization_values) {
  std::vector<std::pair<std::string, std::string>> metadata;
  for (const std::string& value : authorization_values)
    metadata.emplace_back(kAuthorizationMetadataKey, value);
  return UnaryGenericCall(std::move(channel), "/tunefleet.test.WhoAmI/Call", metadata);
}

class AuthenticateContextTest : public ::testing::Test {
 protected:
  void StartServer(const TokenSet* tokens) {
    service_ = std::make_unique<WhoAmIService>(tokens);
    grpc::ServerBuilder builder;
    builder.RegisterCallbackGenericService(service_.get());
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
  }
  void TearDown() override {
    if (server_ != nullptr) server_->Shutdown();
  }

  // The role name the server saw, or the failed call's status.
  [[nodiscard]] absl::StatusOr<std::string> Call(
      const std::vector<std::string>& authorization_values) {
    return CallWhoAmI(server_->InProcessChannel(grpc::ChannelArguments()), authorization_values);
  }

  std::unique_ptr<WhoAmIService> service_;
  std::unique_ptr<grpc::Server> server_;
};

TEST_F(AuthenticateContextTest, ReadsTheRoleFromAuthorizationMetadata) {
  TokenSet tokens = ThreeTokens();
  StartServer(&tokens);
  auto role = Call({BearerHeader(kAgentToken)});
  ASSERT_TRUE(role.ok()) << role.status();
  EXPECT_EQ(*role, "agent");
}

TEST_F(AuthenticateContextTest, RefusesACallWithoutCredentials) {
  TokenSet tokens = ThreeTokens();
  StartServer(&tokens);
  auto role = Call({});
  ASSERT_FALSE(role.ok());
  EXPECT_EQ(role.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_THAT(role.status().message(), HasSubstr("no credentials"));
}

TEST_F(AuthenticateContextTest, RefusesAWrongToken) {
  TokenSet tokens = ThreeTokens();
  StartServer(&tokens);
  auto role = Call({BearerHeader("wrong-token-0123456789")});
  ASSERT_FALSE(role.ok());
  EXPECT_EQ(role.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_THAT(role.status().message(), Not(HasSubstr("wrong-token")));
}

TEST_F(AuthenticateContextTest, RefusesTwoAuthorizationEntries) {
  TokenSet tokens = ThreeTokens();
  StartServer(&tokens);
  auto role = Call({BearerHeader(kUserToken), BearerHeader(kAdminToken)});
  ASSERT_FALSE(role.ok());
  EXPECT_EQ(role.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_THAT(role.status().message(), HasSubstr("more than one"));
}

TEST_F(AuthenticateContextTest, RefusesABoundTokenFromACallerWithoutItsCertificate) {
  TokenSet tokens;
  ASSERT_TRUE(
      tokens.Add(Role::kAgent, kAgentToken, TokenScope{{}, "spiffe://fleet/agent/board-7"}).ok());
  StartServer(&tokens);
  auto role = Call({BearerHeader(kAgentToken)});
  ASSERT_FALSE(role.ok());
  EXPECT_EQ(role.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(role.status().message(), HasSubstr("bound to the client certificate identity "
                                                 "spiffe://fleet/agent/board-7"));
  EXPECT_THAT(role.status().message(), HasSubstr("presented no client certificate"));
}

TEST_F(AuthenticateContextTest, NoTokenSetMeansEveryCallerIsAdmin) {
  StartServer(nullptr);
  auto role = Call({});
  ASSERT_TRUE(role.ok()) << role.status();
  EXPECT_EQ(*role, "admin");
}

// Token binding to a client certificate identity, end to end over real TLS:
// a server on 127.0.0.1 that requires client certificates signed by the fleet
// CA, and a token bound to spiffe://fleet/agent/board-7.
class AuthTlsTest : public ::testing::Test {
 protected:
  static constexpr char kBoundToken[] = "agent-token-bound-0123456789";

  void SetUp() override {
    absl::StatusOr<TestPki> pki = GenerateTestPki();
    ASSERT_TRUE(pki.ok()) << pki.status();
    pki_ = *std::move(pki);
    ASSERT_TRUE(tokens_.Add(Role::kAgent, kBoundToken, TokenScope{{}, kTestClientIdentity}).ok());

    service_ = std::make_unique<WhoAmIService>(&tokens_);
    grpc::SslServerCredentialsOptions ssl(
        GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
    ssl.pem_root_certs = pki_.ca_pem;  // the tracker's --tls_client_ca
    ssl.pem_key_cert_pairs.push_back({pki_.server.key_pem, pki_.server.cert_pem});
    server_ = StartGenericServer(grpc::SslServerCredentials(ssl), service_.get(), &address_);
    ASSERT_NE(server_, nullptr);
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
    return CallWhoAmI(grpc::CreateCustomChannel(address_, grpc::SslCredentials(ssl), arguments),
                      {BearerHeader(kBoundToken)});
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
              ::testing::AllOf(HasSubstr(absl::StrCat("bound to the client certificate identity ",
                                                      kTestClientIdentity)),
                               HasSubstr(kTestOtherClientIdentity)));
}

}  // namespace
}  // namespace tunefleet
