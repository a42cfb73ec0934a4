// BuildService on real builds of a small dense task: artifacts and their
// hash, the cache, every error a request can carry, and the timeout watchdog.
#include "builder_worker/build_service.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "common/sha256.h"
#include "common/signing.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tuner_core/measure/measure.h"
#include "tuner_core/templates/task.h"

namespace tunefleet {
namespace {

using ::testing::HasSubstr;

constexpr char kArgs[] = R"({"M": 16, "N": 16, "K": 16})";

int Code(MeasureErrorNo error_no) { return static_cast<int>(error_no); }

// The task's first config, as JSON text (what a tuner would send).
nlohmann::json FirstConfig() {
  auto task = Task::Make("", "dense", nlohmann::json::parse(kArgs), "llvm");
  EXPECT_TRUE(task.ok()) << task.status();
  auto config = (*task)->space().Get(0);
  EXPECT_TRUE(config.ok()) << config.status();
  return config->ToJson();
}

proto::BuildRequest DenseRequest(const std::string& lease_id) {
  proto::BuildRequest request;
  request.set_lease_id(lease_id);
  request.set_job_id("job-1");
  request.set_trial_id(7);
  request.mutable_task()->set_workload_name("dense");
  request.mutable_task()->set_workload_args_json(kArgs);
  request.mutable_task()->set_target("llvm");
  request.set_config_json(FirstConfig().dump());
  request.set_timeout_s(120);
  return request;
}

// Handles `request` and waits (bounded) for its one answer.
proto::BuildResult Call(BuildService& service, const proto::BuildRequest& request) {
  absl::Notification answered;
  proto::BuildResult result;
  int answers = 0;
  absl::Mutex mu;
  service.Handle(request, [&](proto::BuildResult r) {
    absl::MutexLock lock(&mu);
    ++answers;
    result = std::move(r);
    if (!answered.HasBeenNotified()) answered.Notify();
  });
  EXPECT_TRUE(answered.WaitForNotificationWithTimeout(absl::Seconds(240)))
      << "no answer for lease " << request.lease_id();
  absl::MutexLock lock(&mu);
  EXPECT_EQ(answers, 1);
  return result;
}

BuildServiceOptions SmallOptions() {
  BuildServiceOptions options;
  options.parallelism = 2;
  return options;
}

TEST(BuildServiceTest, BuildsADenseKernelThenAnswersTheSameRequestFromCache) {
  BuildService service(SmallOptions());
  const proto::BuildResult first = Call(service, DenseRequest("lease-1"));
  ASSERT_EQ(first.error_no(), Code(MeasureErrorNo::kNoError)) << first.error_msg();
  EXPECT_EQ(first.lease_id(), "lease-1");
  EXPECT_FALSE(first.from_cache());
  EXPECT_FALSE(first.shared_object().empty());
  EXPECT_EQ(first.shared_object().substr(0, 4),
            "\x7f"
            "ELF");
  EXPECT_EQ(first.artifact_hash(), Sha256Hex(first.shared_object()));
  EXPECT_FALSE(first.entry_name().empty());
  EXPECT_GT(first.build_seconds(), 0.0);
  EXPECT_EQ(service.cache_entries(), 1);

  // Same task and config, JSON written differently: still a hit.
  proto::BuildRequest again = DenseRequest("lease-2");
  again.mutable_task()->set_workload_args_json(R"({"K":16,"N":16,"M":16})");
  const proto::BuildResult second = Call(service, again);
  ASSERT_EQ(second.error_no(), Code(MeasureErrorNo::kNoError)) << second.error_msg();
  EXPECT_TRUE(second.from_cache());
  EXPECT_EQ(second.lease_id(), "lease-2");
  EXPECT_EQ(second.artifact_hash(), first.artifact_hash());
  EXPECT_EQ(second.shared_object(), first.shared_object());
  EXPECT_EQ(service.cache_hits(), 1);
}

TEST(BuildServiceTest, SignsEveryArtifactItAnswersBuiltOrCached) {
  BuildServiceOptions options = SmallOptions();
  absl::StatusOr<SigningKey> key = SigningKey::Generate();
  ASSERT_TRUE(key.ok()) << key.status();
  options.signing_key = *key;
  BuildService service(options);
  absl::StatusOr<PinnedKeys> pinned = PinnedKeys::FromTexts({key->public_key_text()});
  ASSERT_TRUE(pinned.ok());
  for (const char* lease : {"built", "cached"}) {
    const proto::BuildResult result = Call(service, DenseRequest(lease));
    ASSERT_EQ(result.error_no(), Code(MeasureErrorNo::kNoError)) << result.error_msg();
    EXPECT_EQ(result.signer_key(), key->public_key_text());
    EXPECT_TRUE(pinned
                    ->Verify(result.shared_object(), result.artifact_hash(), result.entry_name(),
                             result.signature(), result.signer_key())
                    .ok())
        << lease;
  }
  EXPECT_EQ(service.cache_hits(), 1);
}

TEST(BuildServiceTest, CacheKeyDependsOnTargetAndConfig) {
  BuildService service(SmallOptions());
  const proto::BuildRequest base = DenseRequest("a");
  proto::BuildRequest other_target = base;
  other_target.mutable_task()->set_target("llvm -mcpu=haswell");
  proto::BuildRequest other_lease = base;
  other_lease.set_lease_id("b");
  EXPECT_NE(service.CacheKey(base), service.CacheKey(other_target));
  EXPECT_EQ(service.CacheKey(base), service.CacheKey(other_lease));
}

TEST(BuildServiceTest, ArtifactLargerThanTheCacheIsNotKept) {
  BuildServiceOptions options = SmallOptions();
  options.cache_capacity_bytes = 16;
  BuildService service(options);
  ASSERT_EQ(Call(service, DenseRequest("1")).error_no(), Code(MeasureErrorNo::kNoError));
  const proto::BuildResult second = Call(service, DenseRequest("2"));
  ASSERT_EQ(second.error_no(), Code(MeasureErrorNo::kNoError));
  EXPECT_FALSE(second.from_cache());
  EXPECT_EQ(service.cache_bytes(), 0);
}

TEST(BuildServiceTest, UnknownWorkloadIsInstantiationError) {
  BuildService service(SmallOptions());
  proto::BuildRequest request = DenseRequest("x");
  request.mutable_task()->set_workload_name("no_such_workload");
  const proto::BuildResult result = Call(service, request);
  EXPECT_EQ(result.error_no(), Code(MeasureErrorNo::kInstantiationError));
  EXPECT_THAT(result.error_msg(), HasSubstr("no_such_workload"));
  EXPECT_TRUE(result.shared_object().empty());
}

TEST(BuildServiceTest, BadJsonIsInstantiationErrorNamingTheField) {
  BuildService service(SmallOptions());
  proto::BuildRequest bad_args = DenseRequest("x");
  bad_args.mutable_task()->set_workload_args_json("{\"M\": 16,");
  const proto::BuildResult args_result = Call(service, bad_args);
  EXPECT_EQ(args_result.error_no(), Code(MeasureErrorNo::kInstantiationError));
  EXPECT_THAT(args_result.error_msg(), HasSubstr("workload_args_json"));

  proto::BuildRequest bad_config = DenseRequest("y");
  bad_config.set_config_json("not json at all");
  const proto::BuildResult config_result = Call(service, bad_config);
  EXPECT_EQ(config_result.error_no(), Code(MeasureErrorNo::kInstantiationError));
  EXPECT_THAT(config_result.error_msg(), HasSubstr("config_json"));
}

TEST(BuildServiceTest, ConfigOutsideTheSpaceIsInstantiationErrorNamingTheKnob) {
  BuildService service(SmallOptions());
  nlohmann::json config = FirstConfig();
  nlohmann::json& entity = config["entity"][0];
  const std::string knob = entity[0].get<std::string>();
  entity[2] = entity[2].is_array() ? nlohmann::json::array({-1, 99991}) : nlohmann::json(99991);
  proto::BuildRequest request = DenseRequest("x");
  request.set_config_json(config.dump());
  const proto::BuildResult result = Call(service, request);
  EXPECT_EQ(result.error_no(), Code(MeasureErrorNo::kInstantiationError));
  EXPECT_THAT(result.error_msg(), HasSubstr(knob));
}

TEST(BuildServiceTest, UnknownTargetIsCompileHostNamingTheTarget) {
  BuildService service(SmallOptions());
  proto::BuildRequest request = DenseRequest("x");
  request.mutable_task()->set_target("llvm -mcpu=no-such-cpu");
  const proto::BuildResult result = Call(service, request);
  EXPECT_EQ(result.error_no(), Code(MeasureErrorNo::kCompileHost));
  EXPECT_THAT(result.error_msg(), HasSubstr("no-such-cpu"));
}

TEST(BuildServiceTest, OverrunningBuildIsAnsweredBuildTimeoutOnce) {
  BuildService service(SmallOptions());
  proto::BuildRequest request = DenseRequest("slow");
  request.set_timeout_s(1e-6);
  const proto::BuildResult result = Call(service, request);  // also checks: one answer
  EXPECT_EQ(result.error_no(), Code(MeasureErrorNo::kBuildTimeout));
  EXPECT_EQ(result.lease_id(), "slow");
  EXPECT_THAT(result.error_msg(), HasSubstr("timeout_s"));
  EXPECT_TRUE(result.shared_object().empty());
  // The discarded build, if it ran, is not cached: the next request builds.
}

TEST(BuildServiceTest, OptionsValidateRejectsNegativeValues) {
  BuildServiceOptions options;
  EXPECT_TRUE(options.Validate().ok());
  options.parallelism = -1;
  EXPECT_FALSE(options.Validate().ok());
  options.parallelism = 0;
  options.cache_capacity_bytes = -5;
  EXPECT_THAT(std::string(options.Validate().message()), HasSubstr("cache"));
}

}  // namespace
}  // namespace tunefleet
