// A flood of unknown tokens on the job API, tried for real over gRPC on
// 127.0.0.1: each a token of the shape that costs an Argon2 check (64 MiB),
// from many connections at once. The tracker rations those checks per peer
// host (auth.h), so the flood is refused cheaply; the worker streams, which
// run on other threads, keep their heartbeats, and a real user is answered.
#include <atomic>
#include <chrono>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/fleet.grpc.pb.h"
#include "tracker/auth.h"
#include "tracker/tracker_server.h"

namespace tunefleet {
namespace {

constexpr char kAgentToken[] = "flood-agent-token-0123456789";
constexpr char kUserToken[] = "flood-user-token-0123456789";

std::string TempPath(const std::string& name) {
  const char* base = getenv("TEST_TMPDIR");
  return absl::StrCat(base != nullptr ? base : "/tmp", "/", name);
}

TEST(TokenFloodTest, HeartbeatsAndUsersGetThroughAFloodOfUnknownTokens) {
  TokenSet tokens;
  ASSERT_TRUE(tokens.Add(Role::kAgent, kAgentToken).ok());
  ASSERT_TRUE(tokens.Add(Role::kUser, kUserToken).ok());
  const std::string token_file = TempPath("flood_tokens");
  ASSERT_TRUE(tokens.WriteTokenFile(token_file).ok());

  TrackerServerOptions options;
  options.listen = "127.0.0.1:0";
  options.token_file = token_file;
  // A worker silent for 1 s is lost, and no stall of the tracker is
  // forgiven: heartbeats held up behind the flood would show.
  options.scheduler.heartbeat_interval_s = 0.2;
  options.scheduler.worker_timeout_s = 1.0;
  options.scheduler.stall_forgiveness_s = 0;
  absl::StatusOr<std::unique_ptr<TrackerServer>> tracker = TrackerServer::Start(options);
  ASSERT_TRUE(tracker.ok()) << tracker.status();
  const std::string address = absl::StrCat("127.0.0.1:", (*tracker)->port());

  // The agent: registered, then a heartbeat every 0.2 s; the tracker's
  // messages read on another thread.
  auto gateway = proto::WorkerGateway::NewStub(
      grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  grpc::ClientContext agent_context;
  agent_context.AddMetadata(kAuthorizationMetadataKey, BearerHeader(kAgentToken));
  auto stream = gateway->Connect(&agent_context);
  proto::WorkerMessage hello;
  hello.mutable_register_()->set_role(proto::AGENT);
  hello.mutable_register_()->set_name("flood-agent");
  hello.mutable_register_()->set_device_key("x86-flood");
  hello.mutable_register_()->set_parallelism(1);
  ASSERT_TRUE(stream->Write(hello));
  proto::TrackerMessage registered;
  ASSERT_TRUE(stream->Read(&registered));
  ASSERT_TRUE(registered.has_registered()) << registered.DebugString();
  std::atomic<bool> stop{false};
  std::atomic<int> tracker_errors{0};
  std::thread heart([&] {
    while (!stop.load()) {
      proto::WorkerMessage beat;
      beat.mutable_heartbeat()->set_sent_at(0);
      if (!stream->Write(beat)) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  });
  std::atomic<bool> stream_open{true};
  std::thread reader([&] {
    proto::TrackerMessage message;
    while (stream->Read(&message)) {
      if (message.has_error()) ++tracker_errors;
    }
    stream_open.store(false);
  });

  // The user has worked with the tracker before the flood (its token
  // verified and remembered): a token of this legacy shape presented for the
  // first time from the flooding host competes with the flood for that
  // host's Argon2 ration and may be told to wait a second and retry, by
  // design (the suite failed on that race once).
  auto user =
      proto::JobService::NewStub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  {
    grpc::ClientContext context;
    context.AddMetadata(kAuthorizationMetadataKey, BearerHeader(kUserToken));
    proto::ListDevicesRequest request;
    proto::ListDevicesResponse response;
    const grpc::Status status = user->ListDevices(&context, request, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
  }

  // The flood: 8 connections, each asking again and again with a new token.
  std::atomic<int> refused{0}, rationed{0}, other{0};
  std::vector<std::thread> flood;
  for (int t = 0; t < 8; ++t) {
    flood.emplace_back([&, t] {
      auto jobs = proto::JobService::NewStub(
          grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
      for (int i = 0; !stop.load(); ++i) {
        grpc::ClientContext context;
        context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
        context.AddMetadata(kAuthorizationMetadataKey,
                            BearerHeader(absl::StrCat("guess-", t, "-", i, "-abcdefgh")));
        proto::ListJobsRequest request;
        proto::ListJobsResponse response;
        const grpc::Status status = jobs->ListJobs(&context, request, &response);
        if (status.error_code() == grpc::StatusCode::UNAUTHENTICATED) {
          ++refused;
        } else if (status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) {
          ++rationed;
        } else {
          ++other;
        }
      }
    });
  }

  // Meanwhile the user lists the devices, and sees the agent every time.
  int answered = 0, saw_agent = 0;
  for (int i = 0; i < 10; ++i) {  // over 3 s: three times the agent's timeout
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    context.AddMetadata(kAuthorizationMetadataKey, BearerHeader(kUserToken));
    proto::ListDevicesRequest request;
    proto::ListDevicesResponse response;
    const grpc::Status status = user->ListDevices(&context, request, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
    ++answered;
    for (const proto::WorkerStatus& worker : response.workers()) {
      if (worker.name() == "flood-agent") ++saw_agent;
    }
  }
  // On a loaded machine (the suite's builds beside it) the flood's first
  // Argon2 checks can take the user's 3 s: 8 calls made, 0 rationed. Let it
  // go on, heartbeats with it, until it has made the calls it is judged on
  // below (at most 30 s more).
  const auto flood_until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (refused.load() + rationed.load() <= 100 &&
         std::chrono::steady_clock::now() < flood_until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  // Read before the heartbeats stop: joining the flood's threads may take
  // longer than the agent's 1 s timeout on a busy machine, and a tracker
  // that drops a silent agent then is right to.
  const bool open_through_the_flood = stream_open.load();
  stop.store(true);
  for (std::thread& t : flood) t.join();
  heart.join();
  EXPECT_TRUE(open_through_the_flood) << "the tracker closed the agent's stream during the flood";
  agent_context.TryCancel();
  reader.join();

  std::cout << "flood: " << refused.load() << " refused after an Argon2 check, " << rationed.load()
            << " rationed without one, " << other.load() << " other; the user answered " << answered
            << "/10 times, the agent listed " << saw_agent << "/10\n";
  EXPECT_EQ(answered, 10);
  EXPECT_EQ(saw_agent, 10) << "the agent was dropped during the flood";
  EXPECT_EQ(tracker_errors.load(), 0);
  EXPECT_EQ(other.load(), 0) << "flood calls answered other than refused or rationed";
  EXPECT_GT(refused.load() + rationed.load(), 100);
  EXPECT_GT(rationed.load(), refused.load()) << "the flood's Argon2 checks were not rationed";
}

}  // namespace
}  // namespace tunefleet
