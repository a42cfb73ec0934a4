// Attacks on a running tracker, tried for real over gRPC on 127.0.0.1, each
// refused with a message naming why:
//   - an agent token scoped to one device key registering as another;
//   - a builder that signs nothing, or signs with a key the tracker does not
//     pin, registering;
//   - a builder sending an artifact whose bytes do not match what it signed;
//   - a tracker started off loopback with tokens not bound to certificate
//     identities, or without pinned builder keys.
#include <sys/stat.h>

#include <chrono>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "common/file_util.h"
#include "common/sha256.h"
#include "common/signing.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "proto/fleet.grpc.pb.h"
#include "rpc/test_certs.h"
#include "tracker/auth.h"
#include "tracker/fake_metrics.h"
#include "tracker/fake_outbox.h"
#include "tracker/scheduler.h"
#include "tracker/store/memory_store.h"
#include "tracker/tracker_server.h"
#include "tuner_core/templates/task.h"

namespace tunefleet {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string TempPath(const std::string& name) {
  const char* base = getenv("TEST_TMPDIR");
  return absl::StrCat(base != nullptr ? base : "/tmp", "/", name);
}

constexpr char kBoardToken[] = "rk3399-board-token-0123456789";
constexpr char kBuilderToken[] = "builder-token-0123456789";

class TrackerSecurityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    TokenSet tokens;
    ASSERT_TRUE(tokens.Add(Role::kAgent, kBoardToken, TokenScope{{"rk3399"}, ""}).ok());
    ASSERT_TRUE(tokens.Add(Role::kBuilder, kBuilderToken).ok());
    token_file_ = TempPath("security_tokens");
    ASSERT_TRUE(tokens.WriteTokenFile(token_file_).ok());

    absl::StatusOr<SigningKey> key = SigningKey::Generate();
    ASSERT_TRUE(key.ok()) << key.status();
    pinned_key_ = key->public_key_text();
    keys_file_ = TempPath("security_builder_keys");
    ASSERT_TRUE(WritePinnedKeysFile(keys_file_, {{"builder-1", pinned_key_}}).ok());

    TrackerServerOptions options;
    options.listen = "127.0.0.1:0";
    options.token_file = token_file_;
    options.builder_keys_file = keys_file_;
    absl::StatusOr<std::unique_ptr<TrackerServer>> tracker = TrackerServer::Start(options);
    ASSERT_TRUE(tracker.ok()) << tracker.status();
    tracker_ = *std::move(tracker);
    stub_ = proto::WorkerGateway::NewStub(grpc::CreateChannel(
        absl::StrCat("127.0.0.1:", tracker_->port()), grpc::InsecureChannelCredentials()));
  }

  // Opens a worker stream with `token`, sends `registration` and returns the
  // tracker's first answer (Registered or Error).
  proto::TrackerMessage Register(const std::string& token, const proto::Register& registration) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    context.AddMetadata(kAuthorizationMetadataKey, BearerHeader(token));
    auto stream = stub_->Connect(&context);
    proto::WorkerMessage message;
    *message.mutable_register_() = registration;
    EXPECT_TRUE(stream->Write(message));
    proto::TrackerMessage answer;
    EXPECT_TRUE(stream->Read(&answer));
    context.TryCancel();
    return answer;
  }

  std::string token_file_;
  std::string keys_file_;
  std::string pinned_key_;
  std::unique_ptr<TrackerServer> tracker_;
  std::unique_ptr<proto::WorkerGateway::Stub> stub_;
};

proto::Register Agent(const std::string& name, const std::string& key) {
  proto::Register r;
  r.set_role(proto::AGENT);
  r.set_name(name);
  r.set_device_key(key);
  r.set_parallelism(1);
  return r;
}

proto::Register Builder(const std::string& name, const std::string& signing_key) {
  proto::Register r;
  r.set_role(proto::BUILDER);
  r.set_name(name);
  r.set_parallelism(1);
  r.set_signing_key(signing_key);
  return r;
}

TEST_F(TrackerSecurityTest, AnAgentTokenCannotRegisterAsAnotherDeviceKey) {
  const proto::TrackerMessage refused = Register(kBoardToken, Agent("board-7", "h100"));
  ASSERT_TRUE(refused.has_error()) << refused.DebugString();
  EXPECT_TRUE(refused.error().fatal());
  EXPECT_EQ(refused.error().code(), "PERMISSION_DENIED");
  EXPECT_THAT(refused.error().message(), HasSubstr("scoped to device key rk3399"));
  EXPECT_THAT(refused.error().message(), HasSubstr("cannot register as 'h100'"));

  // Its own key is fine, and the agent is handed the pinned builder keys.
  const proto::TrackerMessage registered = Register(kBoardToken, Agent("board-7", "rk3399"));
  ASSERT_TRUE(registered.has_registered()) << registered.DebugString();
  EXPECT_THAT(registered.registered().builder_keys(), ElementsAre(pinned_key_));
}

TEST_F(TrackerSecurityTest, ABuilderMustSignWithAPinnedKey) {
  const proto::TrackerMessage unsigned_builder = Register(kBuilderToken, Builder("b-1", ""));
  ASSERT_TRUE(unsigned_builder.has_error()) << unsigned_builder.DebugString();
  EXPECT_THAT(unsigned_builder.error().message(), HasSubstr("signs nothing (no --signing_key)"));

  absl::StatusOr<SigningKey> rogue = SigningKey::Generate();
  ASSERT_TRUE(rogue.ok());
  const proto::TrackerMessage foreign =
      Register(kBuilderToken, Builder("b-2", rogue->public_key_text()));
  ASSERT_TRUE(foreign.has_error()) << foreign.DebugString();
  EXPECT_THAT(foreign.error().message(), HasSubstr("which this tracker does not pin"));

  const proto::TrackerMessage pinned = Register(kBuilderToken, Builder("b-3", pinned_key_));
  EXPECT_TRUE(pinned.has_registered()) << pinned.DebugString();
}

// The scheduler side: every artifact is checked against the pinned keys
// before it is queued for an agent.
TEST(ArtifactSignatureTest, ATamperedArtifactFailsItsTrialAndIsCounted) {
  absl::StatusOr<SigningKey> key = SigningKey::Generate();
  ASSERT_TRUE(key.ok());
  SchedulerOptions options;
  options.builder_keys = PinnedKeys::FromTexts({key->public_key_text()}).value();
  MemoryStore store;
  FakeTrackerMetrics metrics;
  FakeClock clock{/*start_nanos=*/100'000'000'000};
  std::unique_ptr<Scheduler> scheduler =
      std::move(Scheduler::Create(&store, &metrics, options, &clock)).value();

  auto registered = [&](proto::Register r, std::shared_ptr<FakeOutbox> outbox) {
    absl::StatusOr<std::string> id = scheduler->RegisterWorker(r, "test", outbox);
    EXPECT_TRUE(id.ok()) << id.status();
    return id.value_or("");
  };
  auto tuner_outbox = std::make_shared<FakeOutbox>();
  auto builder_outbox = std::make_shared<FakeOutbox>();
  auto agent_outbox = std::make_shared<FakeOutbox>();
  proto::Register tuner;
  tuner.set_role(proto::TUNER);
  tuner.set_name("tuner");
  tuner.set_parallelism(1);
  const std::string tuner_id = registered(tuner, tuner_outbox);
  proto::Register builder = Builder("builder", key->public_key_text());
  builder.set_parallelism(2);  // both builds at once
  const std::string builder_id = registered(builder, builder_outbox);
  registered(Agent("agent", "cpu"), agent_outbox);

  proto::JobSpec spec;
  spec.set_device_key("cpu");
  spec.mutable_task()->set_workload_name("dense");
  spec.mutable_task()->set_workload_args_json(R"({"M":32,"N":32,"K":32,"layout":"NK"})");
  spec.mutable_task()->set_target("llvm");
  spec.set_tuner("random");
  spec.set_n_trial(2);
  spec.set_validate_top_k(0);
  const std::string job_id = scheduler->SubmitJob(spec).value().job_id();
  auto task =
      Task::Make("", "dense", nlohmann::json::parse(spec.task().workload_args_json()), "llvm")
          .value();
  proto::WorkerMessage propose;
  propose.mutable_propose()->set_job_id(job_id);
  for (int64_t index : {1, 2}) {
    proto::ProposedConfig* c = propose.mutable_propose()->add_configs();
    c->set_config_json(task->space().Get(index).value().ToJson().dump());
    c->set_config_index(index);
  }
  scheduler->OnMessage(tuner_id, propose);

  const auto builds = builder_outbox->Take(proto::TrackerMessage::kBuild);
  ASSERT_EQ(builds.size(), 2u);
  for (size_t i = 0; i < builds.size(); ++i) {
    proto::WorkerMessage m;
    proto::BuildResult* r = m.mutable_build_result();
    r->set_lease_id(builds[i].build().lease_id());
    const std::string signed_bytes = absl::StrCat("ELF signed ", i);
    r->set_entry_name("kernel");
    r->set_artifact_hash(Sha256Hex(signed_bytes));
    r->set_signature(key->Sign(r->artifact_hash(), r->entry_name()));
    r->set_signer_key(key->public_key_text());
    // The second one is altered after signing, its hash recomputed.
    const std::string bytes = i == 0 ? signed_bytes : absl::StrCat("ELF evil ", i);
    r->set_shared_object(bytes);
    if (i == 1) r->set_artifact_hash(Sha256Hex(bytes));
    scheduler->OnMessage(builder_id, m);
  }
  // The good one goes to the agent with its signature; the tampered one
  // never leaves the tracker.
  const auto measures = agent_outbox->Take(proto::TrackerMessage::kMeasure);
  ASSERT_EQ(measures.size(), 1u);
  EXPECT_EQ(measures[0].measure().artifact_signer(), key->public_key_text());
  EXPECT_FALSE(measures[0].measure().artifact_signature().empty());
  const auto updates = tuner_outbox->Take(proto::TrackerMessage::kTrialUpdate);
  ASSERT_EQ(updates.size(), 1u);
  EXPECT_THAT(updates[0].trial_update().result().error_msg(),
              HasSubstr("artifact refused: the signature does not verify"));
  EXPECT_EQ(metrics.rejected("artifact_signature"), 1);
}

// A listen address that only looks like loopback (a DNS name its owner
// points anywhere) gets no plaintext, unauthenticated tracker.
TEST(ExposedTrackerTest, OnlyLoopbackLiteralsCountAsLoopback) {
  TrackerServerOptions options;
  options.listen = "127.attacker.example:0";
  absl::StatusOr<std::unique_ptr<TrackerServer>> tracker = TrackerServer::Start(options);
  ASSERT_FALSE(tracker.ok());
  EXPECT_THAT(tracker.status().message(), HasSubstr("without authentication"));
}

TEST(ExposedTrackerTest, OffLoopbackEveryTokenMustBeBoundAndArtifactsSigned) {
  absl::StatusOr<TestPki> pki = GenerateTestPki();
  ASSERT_TRUE(pki.ok()) << pki.status();
  TrackerServerOptions options;
  options.listen = "0.0.0.0:0";
  options.tls_cert = TempPath("exposed_server.crt");
  options.tls_key = TempPath("exposed_server.key");
  options.tls_client_ca = TempPath("exposed_ca.crt");
  ASSERT_TRUE(ReplaceFileAtomically(options.tls_cert, pki->server.cert_pem, 0600).ok());
  ASSERT_TRUE(ReplaceFileAtomically(options.tls_key, pki->server.key_pem, 0600).ok());
  ASSERT_TRUE(ReplaceFileAtomically(options.tls_client_ca, pki->ca_pem, 0600).ok());

  TokenSet unbound;
  ASSERT_TRUE(unbound.Add(Role::kAgent, kBoardToken, TokenScope{{"rk3399"}, ""}).ok());
  options.token_file = TempPath("exposed_unbound_tokens");
  ASSERT_TRUE(unbound.WriteTokenFile(options.token_file).ok());
  absl::StatusOr<std::unique_ptr<TrackerServer>> tracker = TrackerServer::Start(options);
  ASSERT_FALSE(tracker.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(tracker.status())) << tracker.status();
  EXPECT_THAT(tracker.status().message(), HasSubstr("not bound to a client certificate identity"));

  TokenSet bound;
  ASSERT_TRUE(
      bound.Add(Role::kAgent, kBoardToken, TokenScope{{"rk3399"}, kTestClientIdentity}).ok());
  options.token_file = TempPath("exposed_bound_tokens");
  ASSERT_TRUE(bound.WriteTokenFile(options.token_file).ok());
  tracker = TrackerServer::Start(options);
  ASSERT_FALSE(tracker.ok());
  EXPECT_THAT(tracker.status().message(), HasSubstr("without pinned builder keys"));

  // With both, it starts.
  absl::StatusOr<SigningKey> key = SigningKey::Generate();
  ASSERT_TRUE(key.ok());
  options.builder_keys_file = TempPath("exposed_builder_keys");
  ASSERT_TRUE(WritePinnedKeysFile(options.builder_keys_file, {{"b", key->public_key_text()}}).ok());
  tracker = TrackerServer::Start(options);
  EXPECT_TRUE(tracker.ok()) << tracker.status();
}

}  // namespace
}  // namespace tunefleet
