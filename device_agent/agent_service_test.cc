// AgentService with a FakeRunner (artifact cache, hash checks, ordering, one
// long-lived measuring thread), and once with the real Runner on a testdata
// kernel. (Simulated agents: tests/fake_agent_test.cc.)
#include "device_agent/agent_service.h"

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "common/sha256.h"
#include "common/text_cap.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernel_runtime/fake_runner.h"
#include "kernel_runtime/runner.h"
#include "kernel_runtime/test_kernels.h"
#include "tuner_core/measure/measure.h"

namespace tunefleet {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

int Code(MeasureErrorNo error_no) { return static_cast<int>(error_no); }

proto::MeasureRequest Request(const std::string& lease_id, const std::string& bytes,
                              bool send_bytes = true) {
  proto::MeasureRequest request;
  request.set_lease_id(lease_id);
  request.set_job_id("job-1");
  proto::RunRequest* run = request.mutable_run();
  run->set_workload_name("dense");
  run->set_workload_args_json(R"({"M": 4, "N": 4, "K": 4})");
  run->set_entry_name("dense_kernel");
  run->set_artifact_hash(Sha256Hex(bytes));
  if (send_bytes) run->set_shared_object(bytes);
  run->mutable_options()->set_repeat(3);
  run->mutable_options()->set_number(1);
  run->mutable_options()->set_timeout_s(30);
  return request;
}

// Collects answers; waits (bounded) for a number of them.
class Results {
 public:
  AgentService::Done Callback() {
    return [this](proto::MeasureResult result) {
      absl::MutexLock lock(&mu_);
      results_.push_back(std::move(result));
    };
  }
  std::vector<proto::MeasureResult> WaitFor(size_t count) {
    absl::MutexLock lock(&mu_);
    auto enough = [this, count]()
                      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return results_.size() >= count; };
    EXPECT_TRUE(mu_.AwaitWithTimeout(absl::Condition(&enough), absl::Seconds(60)))
        << "got " << results_.size() << " of " << count << " answers";
    return results_;
  }

 private:
  absl::Mutex mu_;
  std::vector<proto::MeasureResult> results_ ABSL_GUARDED_BY(mu_);
};

TEST(AgentServiceTest, StoresArtifactBytesAndReusesThemByHash) {
  FakeRunner runner;
  AgentService service(&runner, {});
  Results results;
  service.Handle(Request("with-bytes", "ELF-bytes-1"), results.Callback());
  service.Handle(Request("by-hash", "ELF-bytes-1", /*send_bytes=*/false), results.Callback());
  const auto answers = results.WaitFor(2);
  ASSERT_EQ(answers.size(), 2u);
  for (const proto::MeasureResult& answer : answers) {
    EXPECT_EQ(answer.run().error_no(), Code(MeasureErrorNo::kNoError)) << answer.run().error_msg();
    EXPECT_THAT(answer.run().costs(), ElementsAre(1e-3));  // 3 repeats, trimmed
    EXPECT_FALSE(answer.need_artifact());
    EXPECT_GE(answer.measure_seconds(), 0.0);
  }
  EXPECT_EQ(answers[0].lease_id(), "with-bytes");
  EXPECT_EQ(answers[1].lease_id(), "by-hash");
  // The runner always gets the bytes, from the request or from the cache.
  ASSERT_EQ(runner.requests().size(), 2u);
  EXPECT_EQ(runner.requests()[1].shared_object(), "ELF-bytes-1");
  EXPECT_TRUE(service.HasArtifact(Sha256Hex("ELF-bytes-1")));
  EXPECT_EQ(service.cache_entries(), 1);
}

TEST(AgentServiceTest, FreshRunnerRequestsRecycleTheChildFirst) {
  FakeRunner runner;
  AgentService service(&runner, {});
  Results results;
  service.Handle(Request("search", "ELF-bytes-1"), results.Callback());
  proto::MeasureRequest validation = Request("validation", "ELF-bytes-1", /*send_bytes=*/false);
  validation.set_fresh_runner(true);
  service.Handle(validation, results.Callback());
  const auto answers = results.WaitFor(2);
  ASSERT_EQ(answers.size(), 2u);
  EXPECT_EQ(answers[1].run().error_no(), Code(MeasureErrorNo::kNoError));
  EXPECT_EQ(runner.recycles(), 1);
  EXPECT_EQ(runner.requests().size(), 2u);
}

TEST(AgentServiceTest, EachJobGetsAFreshRunnerChild) {
  FakeRunner runner;
  AgentService service(&runner, {});
  Results results;
  service.Handle(Request("a1", "ELF-bytes-1"), results.Callback());
  service.Handle(Request("a2", "ELF-bytes-1", /*send_bytes=*/false), results.Callback());
  proto::MeasureRequest other = Request("b1", "ELF-bytes-1", /*send_bytes=*/false);
  other.set_job_id("job-2");  // another user's, say
  service.Handle(other, results.Callback());
  service.Handle(Request("a3", "ELF-bytes-1", /*send_bytes=*/false), results.Callback());
  const auto answers = results.WaitFor(4);
  ASSERT_EQ(answers.size(), 4u);
  // job-1, job-1 (same child), job-2 (fresh), job-1 again (fresh).
  EXPECT_EQ(runner.recycles(), 2);
  EXPECT_EQ(runner.requests().size(), 4u);
}

TEST(AgentServiceTest, AbortStopsTheRunningRequestAndAnswersAQueuedOneUnrun) {
  absl::Notification started, release;
  std::atomic<int> aborts{0};
  class AbortableRunner final : public RunnerInterface {
   public:
    AbortableRunner(absl::Notification* started, absl::Notification* release,
                    std::atomic<int>* aborts)
        : started_(started), release_(release), aborts_(aborts) {}
    proto::RunResult Run(const proto::RunRequest&) override {
      started_->Notify();
      release_->WaitForNotification();  // a hung kernel until aborted
      proto::RunResult r;
      r.set_error_no(Code(MeasureErrorNo::kUnknown));
      r.set_error_msg("aborted: test");
      return r;
    }
    void Abort(const std::string&) override {
      ++*aborts_;
      release_->Notify();
    }

   private:
    absl::Notification* started_;
    absl::Notification* release_;
    std::atomic<int>* aborts_;
  } runner(&started, &release, &aborts);
  AgentService service(&runner, {});
  Results results;
  service.Handle(Request("running", "ELF-bytes-1"), results.Callback());
  service.Handle(Request("queued", "ELF-bytes-1"), results.Callback());
  started.WaitForNotification();
  service.Abort("queued", "job cancelled");
  service.Abort("unknown-lease", "ignored");
  service.Abort("running", "job cancelled");
  const auto answers = results.WaitFor(2);
  ASSERT_EQ(answers.size(), 2u);
  EXPECT_EQ(answers[0].lease_id(), "queued");
  EXPECT_THAT(answers[0].run().error_msg(), HasSubstr("aborted before it ran: job cancelled"));
  EXPECT_EQ(answers[1].lease_id(), "running");
  EXPECT_THAT(answers[1].run().error_msg(), HasSubstr("aborted"));
  EXPECT_EQ(aborts.load(), 1);
}

// A kernel owns its runner child and writes its own result frame: whatever
// it puts in error_msg reaches the tracker cut to the cap.
TEST(AgentServiceTest, AChildsErrorMessageIsForwardedCapped) {
  class TalkativeRunner final : public RunnerInterface {
   public:
    proto::RunResult Run(const proto::RunRequest&) override {
      proto::RunResult r;
      r.set_error_no(Code(MeasureErrorNo::kRuntimeDevice));
      r.set_error_msg(std::string(1 << 20, 's'));  // a stolen file, say
      return r;
    }
    void Abort(const std::string&) override {}
  } runner;
  AgentService service(&runner, {});
  Results results;
  service.Handle(Request("lease", "ELF-bytes-1"), results.Callback());
  const auto answers = results.WaitFor(1);
  ASSERT_EQ(answers.size(), 1u);
  EXPECT_LE(answers[0].run().error_msg().size(), kMaxReportedMessageBytes);
  EXPECT_THAT(answers[0].run().error_msg(), HasSubstr(" bytes cut]"));
}

TEST(AgentServiceTest, UnknownHashWithoutBytesAsksForTheArtifact) {
  FakeRunner runner;
  AgentService service(&runner, {});
  Results results;
  service.Handle(Request("lease", "never-sent", /*send_bytes=*/false), results.Callback());
  const auto answers = results.WaitFor(1);
  ASSERT_EQ(answers.size(), 1u);
  EXPECT_TRUE(answers[0].need_artifact());
  EXPECT_NE(answers[0].run().error_no(), Code(MeasureErrorNo::kNoError));
  EXPECT_TRUE(answers[0].run().costs().empty());
  EXPECT_TRUE(runner.requests().empty());
}

TEST(AgentServiceTest, BytesThatDoNotMatchTheHashAreRefusedUnrun) {
  FakeRunner runner;
  AgentService service(&runner, {});
  Results results;
  proto::MeasureRequest request = Request("lease", "real-bytes");
  request.mutable_run()->set_shared_object("tampered-bytes");
  service.Handle(request, results.Callback());
  const auto answers = results.WaitFor(1);
  ASSERT_EQ(answers.size(), 1u);
  EXPECT_EQ(answers[0].run().error_no(), Code(MeasureErrorNo::kUnknown));
  EXPECT_THAT(answers[0].run().error_msg(), HasSubstr("hash mismatch"));
  EXPECT_THAT(answers[0].run().error_msg(), HasSubstr(Sha256Hex("tampered-bytes")));
  EXPECT_TRUE(runner.requests().empty());
  EXPECT_EQ(service.cache_entries(), 0);
}

// A builder key, the agent's pins holding it, and requests it signed.
class SignedArtifactsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<SigningKey> key = SigningKey::Generate();
    ASSERT_TRUE(key.ok()) << key.status();
    key_.emplace(*key);
    absl::StatusOr<PinnedKeys> pinned = PinnedKeys::FromTexts({key_->public_key_text()});
    ASSERT_TRUE(pinned.ok()) << pinned.status();
    pinned_ = *pinned;
  }
  proto::MeasureRequest Signed(const std::string& lease_id, const std::string& bytes) {
    proto::MeasureRequest request = Request(lease_id, bytes);
    request.set_artifact_signature(
        key_->Sign(request.run().artifact_hash(), request.run().entry_name()));
    request.set_artifact_signer(key_->public_key_text());
    return request;
  }
  std::optional<SigningKey> key_;
  PinnedKeys pinned_;
};

TEST_F(SignedArtifactsTest, LoadsSignedArtifactsAndRefusesTamperedOrUnsignedOnes) {
  FakeRunner runner;
  AgentService service(&runner, {});
  service.SetPinnedBuilderKeys(pinned_);
  Results results;
  service.Handle(Signed("signed", "ELF-good"), results.Callback());
  // Tampered in transit, hash recomputed to match: the signature catches it.
  proto::MeasureRequest tampered = Signed("tampered", "ELF-evil");
  tampered.mutable_run()->set_shared_object("ELF-eviL");
  tampered.mutable_run()->set_artifact_hash(Sha256Hex("ELF-eviL"));
  service.Handle(tampered, results.Callback());
  service.Handle(Request("unsigned", "ELF-unsigned"), results.Callback());
  // Signed by a key nobody pinned.
  absl::StatusOr<SigningKey> rogue = SigningKey::Generate();
  ASSERT_TRUE(rogue.ok());
  proto::MeasureRequest forged = Request("forged", "ELF-forged");
  forged.set_artifact_signature(
      rogue->Sign(forged.run().artifact_hash(), forged.run().entry_name()));
  forged.set_artifact_signer(rogue->public_key_text());
  service.Handle(forged, results.Callback());

  const auto answers = results.WaitFor(4);
  ASSERT_EQ(answers.size(), 4u);
  EXPECT_EQ(answers[0].run().error_no(), Code(MeasureErrorNo::kNoError))
      << answers[0].run().error_msg();
  EXPECT_THAT(answers[1].run().error_msg(), HasSubstr("artifact refused: the signature does not"));
  EXPECT_THAT(answers[2].run().error_msg(), HasSubstr("artifact refused: it is unsigned"));
  EXPECT_THAT(answers[3].run().error_msg(), HasSubstr("not a pinned builder key"));
  for (int i = 1; i < 4; ++i)
    EXPECT_EQ(answers[i].run().error_no(), Code(MeasureErrorNo::kUnknown));
  // Only the signed one reached the runner or the cache.
  ASSERT_EQ(runner.requests().size(), 1u);
  EXPECT_EQ(runner.requests()[0].shared_object(), "ELF-good");
  EXPECT_EQ(service.cache_entries(), 1);
  EXPECT_EQ(service.artifacts_refused(), 3);
}

TEST_F(SignedArtifactsTest, AnAgentThatRequiresSignaturesRefusesWhenTheTrackerPinsNoKeys) {
  FakeRunner runner;
  AgentServiceOptions options;
  options.require_signed_artifacts = true;
  AgentService service(&runner, options);
  Results results;
  service.Handle(Signed("signed-but-unpinned", "ELF-good"), results.Callback());
  const auto answers = results.WaitFor(1);
  ASSERT_EQ(answers.size(), 1u);
  EXPECT_THAT(answers[0].run().error_msg(), HasSubstr("requires signed artifacts"));
  EXPECT_TRUE(runner.requests().empty());
  EXPECT_EQ(service.artifacts_refused(), 1);
}

TEST(AgentServiceTest, MeasuresOneAtATimeInOrderOnOneLongLivedThread) {
  std::atomic<int> in_flight{0}, max_in_flight{0};
  absl::Mutex mu;
  std::vector<std::thread::id> threads;
  FakeRunner runner([&](const proto::RunRequest& request) {
    const int now = ++in_flight;
    int seen = max_in_flight.load();
    while (now > seen && !max_in_flight.compare_exchange_weak(seen, now)) {
    }
    {
      absl::MutexLock lock(&mu);
      threads.push_back(std::this_thread::get_id());
    }
    --in_flight;
    proto::RunResult result;
    result.add_costs(1e-4);
    return result;
  });
  AgentService service(&runner, {});
  Results results;
  for (int i = 0; i < 6; ++i) {
    service.Handle(Request(std::to_string(i), "kernel-" + std::to_string(i)), results.Callback());
  }
  const auto answers = results.WaitFor(6);
  ASSERT_EQ(answers.size(), 6u);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(answers[i].lease_id(), std::to_string(i));
  EXPECT_EQ(max_in_flight.load(), 1);
  absl::MutexLock lock(&mu);
  ASSERT_EQ(threads.size(), 6u);
  for (const std::thread::id& id : threads) EXPECT_EQ(id, threads[0]);
  EXPECT_NE(threads[0], std::this_thread::get_id());
}

TEST(AgentServiceTest, LeastRecentlyUsedArtifactIsEvictedFirst) {
  FakeRunner runner;
  AgentServiceOptions options;
  options.artifact_cache_capacity_bytes = 10;  // one 6-byte artifact fits
  AgentService service(&runner, options);
  Results results;
  service.Handle(Request("a", "AAAAAA"), results.Callback());
  service.Handle(Request("b", "BBBBBB"), results.Callback());
  service.Handle(Request("a-again", "AAAAAA", /*send_bytes=*/false), results.Callback());
  const auto answers = results.WaitFor(3);
  ASSERT_EQ(answers.size(), 3u);
  EXPECT_TRUE(answers[2].need_artifact());
  EXPECT_TRUE(service.HasArtifact(Sha256Hex("BBBBBB")));
  EXPECT_EQ(service.cache_bytes(), 6);
}

TEST(AgentServiceTest, DropQueuedForgetsWaitingRequestsButNotTheRunningOne) {
  absl::Notification release;
  FakeRunner runner([&](const proto::RunRequest&) {
    release.WaitForNotificationWithTimeout(absl::Seconds(60));
    proto::RunResult result;
    result.add_costs(1e-3);
    return result;
  });
  AgentService service(&runner, {});
  Results results;
  service.Handle(Request("running", "k"), results.Callback());
  // Wait until the first request left the queue (it is in the runner).
  for (int i = 0; i < 6000 && runner.requests().empty(); ++i) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  ASSERT_EQ(runner.requests().size(), 1u);
  service.Handle(Request("queued-1", "k"), results.Callback());
  service.Calibrate([](proto::Calibration) {});  // dropped too, but not a lease
  service.Handle(Request("queued-2", "k"), results.Callback());
  EXPECT_EQ(service.DropQueued(), 2);
  EXPECT_EQ(service.queued(), 0);
  release.Notify();
  const auto answers = results.WaitFor(1);
  ASSERT_EQ(answers.size(), 1u);
  EXPECT_EQ(answers[0].lease_id(), "running");
}

TEST(AgentServiceTest, OptionsValidate) {
  AgentServiceOptions options;
  EXPECT_TRUE(options.Validate().ok());
  options.artifact_cache_capacity_bytes = -1;
  EXPECT_THAT(std::string(options.Validate().message()), HasSubstr("artifact cache capacity"));
}

TEST(AgentServiceTest, RealRunnerMeasuresATestdataKernel) {
  auto runner = Runner::Create(RunnerOptions{
      .runner_path = testing::RunfilePath("kernel_runtime/tunefleet_runner"), .num_threads = 2});
  ASSERT_TRUE(runner.ok()) << runner.status();
  AgentService service(runner->get(), {});
  proto::MeasureRequest request;
  request.set_lease_id("real");
  *request.mutable_run() = testing::DenseTestRequest("libdense_ok.so");
  request.mutable_run()->set_artifact_hash(Sha256Hex(request.run().shared_object()));
  Results results;
  service.Handle(request, results.Callback());
  const auto answers = results.WaitFor(1);
  ASSERT_EQ(answers.size(), 1u);
  EXPECT_EQ(answers[0].run().error_no(), Code(MeasureErrorNo::kNoError))
      << answers[0].run().error_msg();
  EXPECT_EQ(answers[0].run().costs_size(), 1);
  EXPECT_GT(answers[0].measure_seconds(), 0.0);
}

// A runner answering success with `cost` seconds for every repeat.
FakeRunner::Responder AnswerCost(double cost) {
  return [cost](const proto::RunRequest&) {
    proto::RunResult result;
    result.add_costs(1e-3);
    result.add_costs(cost);
    return result;
  };
}

TEST(AgentServiceTest, CostFasterThanTheDeviceCouldRunIsAnError) {
  // dense 4x4x4 is 128 FLOP; in 1e-12 s that is 128000 GFLOPS > 1000.
  FakeRunner runner(AnswerCost(1e-12));
  AgentServiceOptions options;
  options.max_gflops = 1000;
  AgentService service(&runner, options);
  Results results;
  service.Handle(Request("fast", "ELF"), results.Callback());
  const auto answers = results.WaitFor(1);
  ASSERT_EQ(answers.size(), 1u);
  EXPECT_EQ(answers[0].run().error_no(), Code(MeasureErrorNo::kRuntimeDevice));
  EXPECT_THAT(answers[0].run().error_msg(), HasSubstr("invalid measurement: cost[1] = 1e-12 s"));
  EXPECT_THAT(answers[0].run().error_msg(), HasSubstr("1000 GFLOPS"));
  EXPECT_TRUE(answers[0].run().costs().empty());
}

TEST(AgentServiceTest, ZeroCostIsAnErrorEvenWithoutAFlopBound) {
  FakeRunner runner(AnswerCost(0.0));
  AgentService service(&runner, {});
  Results results;
  service.Handle(Request("zero", "ELF"), results.Callback());
  const auto answers = results.WaitFor(1);
  ASSERT_EQ(answers.size(), 1u);
  EXPECT_EQ(answers[0].run().error_no(), Code(MeasureErrorNo::kRuntimeDevice));
  EXPECT_THAT(answers[0].run().error_msg(), HasSubstr("cost[1] = 0 s is not a time"));
}

TEST(AgentServiceTest, PlausibleCostsPassTheBound) {
  FakeRunner runner(AnswerCost(2e-3));
  AgentServiceOptions options;
  options.max_gflops = 1000;
  AgentService service(&runner, options);
  Results results;
  service.Handle(Request("fine", "ELF"), results.Callback());
  const auto answers = results.WaitFor(1);
  ASSERT_EQ(answers.size(), 1u);
  EXPECT_EQ(answers[0].run().error_no(), Code(MeasureErrorNo::kNoError));
  EXPECT_EQ(answers[0].run().costs_size(), 2);
}

// Collects calibrations; waits (bounded) for one.
class Calibrations {
 public:
  AgentService::CalibrationDone Callback() {
    return [this](proto::Calibration c) {
      absl::MutexLock lock(&mu_);
      got_.push_back(std::move(c));
    };
  }
  proto::Calibration WaitForOne() {
    absl::MutexLock lock(&mu_);
    auto one = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !got_.empty(); };
    EXPECT_TRUE(mu_.AwaitWithTimeout(absl::Condition(&one), absl::Seconds(60)));
    return got_.empty() ? proto::Calibration() : got_.front();
  }

 private:
  absl::Mutex mu_;
  std::vector<proto::Calibration> got_ ABSL_GUARDED_BY(mu_);
};

TEST(AgentServiceTest, CalibrationRunsOnTheMeasuringThreadBetweenMeasurements) {
  std::atomic<bool> measuring{false};
  std::atomic<bool> overlapped{false};
  std::thread::id measuring_thread;
  FakeRunner runner([&](const proto::RunRequest&) {
    measuring = true;
    measuring_thread = std::this_thread::get_id();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    measuring = false;
    proto::RunResult result;
    result.add_costs(1e-4);
    return result;
  });
  std::thread::id calibrating_thread;
  AgentServiceOptions options;
  options.calibrate = [&]() -> absl::StatusOr<CalibrationFigures> {
    if (measuring) overlapped = true;
    calibrating_thread = std::this_thread::get_id();
    return CalibrationFigures{.gflops = 42.5, .noise = 0.012, .repeats = 12};
  };
  AgentService service(&runner, options);
  Results results;
  Calibrations calibrations;
  service.Handle(Request("1", "kernel-1"), results.Callback());
  service.Calibrate(calibrations.Callback());
  service.Handle(Request("2", "kernel-2"), results.Callback());
  const proto::Calibration c = calibrations.WaitForOne();
  ASSERT_EQ(results.WaitFor(2).size(), 2u);
  EXPECT_TRUE(c.error().empty()) << c.error();
  EXPECT_EQ(c.gflops(), 42.5);
  EXPECT_EQ(c.noise(), 0.012);
  EXPECT_EQ(c.repeats(), 12);
  EXPECT_FALSE(overlapped);
  EXPECT_EQ(calibrating_thread, measuring_thread);
}

TEST(AgentServiceTest, CalibrationSaysWhyItHasNoFigures) {
  FakeRunner runner;
  {
    AgentService service(&runner, {});
    Calibrations calibrations;
    service.Calibrate(calibrations.Callback());
    EXPECT_THAT(calibrations.WaitForOne().error(), HasSubstr("no calibration kernel"));
  }
  AgentServiceOptions options;
  options.calibrate = []() -> absl::StatusOr<CalibrationFigures> {
    return absl::InternalError("clock went backwards");
  };
  AgentService service(&runner, options);
  Calibrations calibrations;
  service.Calibrate(calibrations.Callback());
  const proto::Calibration c = calibrations.WaitForOne();
  EXPECT_EQ(c.error(), "clock went backwards");
  EXPECT_EQ(c.gflops(), 0);
}

}  // namespace
}  // namespace tunefleet
