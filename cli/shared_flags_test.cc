// The one flags -> job spec mapping that tune, optimize and submit share.
#include "cli/shared_flags.h"

#include "absl/flags/flag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/str_cat.h"
#include "cli/cli_commands.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto_convert/task_spec.h"

namespace tunefleet {
namespace {

using ::testing::HasSubstr;

constexpr char kZen4[] = "llvm -mtriple=x86_64-linux-gnu -mcpu=znver4";

TEST(JobSpecFromFlagsTest, AKernelJobCarriesEveryFlagOfTheSearch) {
  absl::FlagSaver saver;
  absl::SetFlag(&FLAGS_workload, "dense");
  absl::SetFlag(&FLAGS_shape, "64,32,16");
  absl::SetFlag(&FLAGS_layout, "KN");
  absl::SetFlag(&FLAGS_tuner, "xgb");
  absl::SetFlag(&FLAGS_trials, 40);
  absl::SetFlag(&FLAGS_seed, 9);
  absl::SetFlag(&FLAGS_early_stopping, 12);
  absl::SetFlag(&FLAGS_plan_size, 16);
  absl::SetFlag(&FLAGS_number, 7);
  absl::SetFlag(&FLAGS_validate_top_k, 3);
  absl::SetFlag(&FLAGS_validation_passes, 4);
  absl::StatusOr<proto::JobSpec> spec = JobSpecFromFlags({.target = kZen4});
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->task().workload_name(), "dense");
  EXPECT_EQ(nlohmann::json::parse(spec->task().workload_args_json()),
            nlohmann::json({{"M", 64}, {"N", 32}, {"K", 16}, {"layout", "KN"}}));
  EXPECT_EQ(spec->task().target(), kZen4);
  EXPECT_EQ(spec->tuner(), "xgb");
  EXPECT_EQ(spec->n_trial(), 40);
  EXPECT_EQ(spec->seed(), 9u);
  EXPECT_EQ(spec->early_stopping(), 12);
  EXPECT_EQ(spec->plan_size(), 16);
  EXPECT_EQ(spec->measure().number(), 7);
  EXPECT_EQ(spec->validate_top_k(), 3);
  EXPECT_EQ(spec->validation_passes(), 4);
  // The target resolved for the fleet's tuner: Zen 4 has 32 zmm registers.
  EXPECT_EQ(spec->task().vectors().vector_registers(), 32);
  EXPECT_EQ(spec->task().vectors().max_vector_bits(), 512);
  // The spec is one a fleet's tuner and local mode both accept.
  EXPECT_TRUE(TaskFromSpec(spec->task()).ok());
}

TEST(JobSpecFromFlagsTest, AJobStartsWarmFromTheRecordsShippedForItsTargetsFamily) {
  absl::FlagSaver saver;
  absl::SetFlag(&FLAGS_shape, "64,64,64");
  EXPECT_EQ(JobSpecFromFlags({.target = kZen4}).value().pretuned_family(), "x86_64-avx512");
  absl::SetFlag(&FLAGS_target, "llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72");
  EXPECT_EQ(JobSpecFromFlags({.target = kZen4}).value().pretuned_family(), "aarch64-neon");
  absl::SetFlag(&FLAGS_pretuned, "none");
  EXPECT_EQ(JobSpecFromFlags({.target = kZen4}).value().pretuned_family(), "");
  // A record file is local mode's (LocalRunFromFlags), not the spec's.
  absl::SetFlag(&FLAGS_pretuned, "/tmp/mine.jsonl");
  EXPECT_EQ(JobSpecFromFlags({.target = kZen4}).value().pretuned_family(), "");
  EXPECT_EQ(LocalRunFromFlags().pretuned_file, "/tmp/mine.jsonl");
}

TEST(JobSpecFromFlagsTest, ARecordFileIsRefusedForTheFleet) {
  absl::FlagSaver saver;
  absl::SetFlag(&FLAGS_shape, "64,64,64");
  absl::SetFlag(&FLAGS_pretuned, "/tmp/mine.jsonl");
  absl::StatusOr<proto::JobSpec> spec = JobSpecFromFlags({.target = kZen4, .for_fleet = true});
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(spec.status().message(), HasSubstr("/tmp/mine.jsonl"));
}

TEST(JobSpecFromFlagsTest, AModelJobTunesWithXgbAndAKernelJobWithRandomUnlessTold) {
  absl::FlagSaver saver;
  absl::SetFlag(&FLAGS_shape, "64,64,64");
  EXPECT_EQ(JobSpecFromFlags({.target = kZen4}).value().tuner(), "random");
  absl::SetFlag(&FLAGS_model, "resnet-18");
  EXPECT_EQ(JobSpecFromFlags({.target = kZen4}).value().tuner(), "xgb");
  absl::SetFlag(&FLAGS_tuner, "ga");
  EXPECT_EQ(JobSpecFromFlags({.target = kZen4}).value().tuner(), "ga");
}

// A model job times its kernels with their inputs (weights too) flushed
// from the caches, as the compiled model finds them; one workload keeps
// them warm; --cache_flush decides either way.
TEST(JobSpecFromFlagsTest, AModelJobFlushesTheCachesBeforeEachRepeatUnlessTold) {
  absl::FlagSaver saver;
  absl::SetFlag(&FLAGS_shape, "64,64,64");
  EXPECT_FALSE(JobSpecFromFlags({.target = kZen4}).value().measure().enable_cpu_cache_flush());
  absl::SetFlag(&FLAGS_cache_flush, "true");
  EXPECT_TRUE(JobSpecFromFlags({.target = kZen4}).value().measure().enable_cpu_cache_flush());
  absl::SetFlag(&FLAGS_cache_flush, "");
  absl::SetFlag(&FLAGS_model, "resnet-18");
  EXPECT_TRUE(JobSpecFromFlags({.target = kZen4}).value().measure().enable_cpu_cache_flush());
  absl::SetFlag(&FLAGS_cache_flush, "false");
  EXPECT_FALSE(JobSpecFromFlags({.target = kZen4}).value().measure().enable_cpu_cache_flush());
  absl::SetFlag(&FLAGS_cache_flush, "yes");
  EXPECT_THAT(JobSpecFromFlags({.target = kZen4}).status().message(),
              HasSubstr("--cache_flush must be true or false, got \"yes\""));
}

TEST(JobSpecFromFlagsTest, AModelJobSpreadsItsTrialsByTheCommandsPolicy) {
  absl::FlagSaver saver;
  absl::SetFlag(&FLAGS_model, "resnet-18");
  absl::SetFlag(&FLAGS_trials, 10);
  absl::StatusOr<proto::JobSpec> spec =
      JobSpecFromFlags({.target = kZen4, .task_policy = "sequential"});
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->tasks_size(), 12);
  EXPECT_EQ(spec->trials_per_task(), 10);
  EXPECT_EQ(spec->n_trial(), 120);
  EXPECT_EQ(spec->task_policy(), "sequential");
  absl::SetFlag(&FLAGS_task_policy, "round_robin");
  absl::SetFlag(&FLAGS_trials_per_task, 4);
  spec = JobSpecFromFlags({.target = kZen4, .task_policy = "sequential"});
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->task_policy(), "round_robin");
  EXPECT_EQ(spec->trials_per_task(), 4);
  // Transfer between tasks and schedule sharing: the spec's defaults unless named.
  EXPECT_FALSE(spec->has_transfer_between_tasks());
  EXPECT_FALSE(spec->has_share_schedules());
  absl::SetFlag(&FLAGS_transfer_between_tasks, "false");
  absl::SetFlag(&FLAGS_share_schedules, "true");
  spec = JobSpecFromFlags({.target = kZen4});
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_FALSE(spec->transfer_between_tasks());
  EXPECT_TRUE(spec->share_schedules());
  absl::SetFlag(&FLAGS_transfer_between_tasks, "off");
  EXPECT_THAT(JobSpecFromFlags({.target = kZen4}).status().message(),
              HasSubstr("--transfer_between_tasks must be true or false, got \"off\""));
}

TEST(JobSpecFromFlagsTest, BadFlagsAreNamed) {
  absl::FlagSaver saver;
  absl::SetFlag(&FLAGS_shape, "12,x,4");
  EXPECT_THAT(JobSpecFromFlags({.target = kZen4}).status().message(),
              HasSubstr("\"x\" is not an integer"));
  absl::SetFlag(&FLAGS_args, "[1,2]");
  EXPECT_THAT(JobSpecFromFlags({.target = kZen4}).status().message(),
              HasSubstr("--args is not a JSON object"));
}

TEST(CliUsageTest, NamesEveryCommandWhole) {
  const std::string usage = CliUsage();
  for (const CliCommand& command : CliCommands()) {
    EXPECT_THAT(usage, HasSubstr(absl::StrCat("\n  ", command.name, " "))) << command.name;
  }
}

}  // namespace
}  // namespace tunefleet
