#include "tuner_core/features/feature_extractor.h"

#include <chrono>
#include <cstdio>

#include "gtest/gtest.h"
#include "tuner_core/features/curve_features.h"
#include "tuner_core/features/itervar_features.h"
#include "tuner_core/templates/task_test_util.h"

namespace tunefleet {
namespace {

Config WithKnob(const Task& task, const std::string& knob, const nlohmann::json& value) {
  nlohmann::json entity = {{"vec", "ot", 8},      {"nr_vecs", "ot", 2},   {"mr", "ot", 6},
                           {"kc", "ot", 128},     {"mc_panels", "ot", 4}, {"nc_panels", "ot", 4},
                           {"unroll_k", "ot", 1}, {"pack_a", "ot", 1},    {"order", "ot", "nm"},
                           {"fuse", "ot", "mn"}};
  bool found = false;
  for (auto& e : entity) {
    if (e[0] == knob) {
      e[2] = value;
      found = true;
    }
  }
  if (!found) entity.push_back({knob, "ot", value});  // the prefetch knobs, absent above
  absl::StatusOr<Config> config = task.space().FromJson({{"entity", entity}});
  EXPECT_TRUE(config.ok()) << config.status();
  return *config;
}

TEST(FeatureExtractorTest, ParsesKindNamesAndRejectsUnknownOnes) {
  EXPECT_EQ(*ParseFeatureKind("itervar"), FeatureKind::kItervar);
  EXPECT_EQ(*ParseFeatureKind("knob"), FeatureKind::kKnob);
  EXPECT_EQ(*ParseFeatureKind("curve"), FeatureKind::kCurve);
  EXPECT_EQ(ParseFeatureKind("loops").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(FeatureExtractorTest, ItervarAndCurveHaveTheSameLengthForEveryShape) {
  auto small = DensePackTask(64, 64, 64), big = DensePackTask(1024, 1024, 1024);
  for (FeatureKind kind : {FeatureKind::kItervar, FeatureKind::kCurve}) {
    auto a = FeatureExtractor::Create(kind, *small), b = FeatureExtractor::Create(kind, *big);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(a->num_features(), b->num_features());
    auto row = a->Extract(int64_t{5});
    ASSERT_TRUE(row.ok()) << row.status();
    EXPECT_EQ(static_cast<int>(row->size()), a->num_features());
  }
  EXPECT_EQ(FeatureExtractor::Create(FeatureKind::kItervar, *small)->num_features(),
            features::kItervarFeatureLength);
  EXPECT_EQ(FeatureExtractor::Create(FeatureKind::kCurve, *small)->num_features(),
            features::kCurveFeatureLength);
}

TEST(FeatureExtractorTest, ConfigsWithDifferentLoopNestsHaveDifferentFeatures) {
  auto task = DensePackTask(256, 256, 256);
  for (FeatureKind kind : {FeatureKind::kItervar, FeatureKind::kCurve, FeatureKind::kKnob}) {
    auto extractor = FeatureExtractor::Create(kind, *task);
    ASSERT_TRUE(extractor.ok());
    auto base = extractor->Extract(WithKnob(*task, "vec", 8));
    ASSERT_TRUE(base.ok()) << base.status();
    EXPECT_EQ(*base, *extractor->Extract(WithKnob(*task, "vec", 8))) << "deterministic";
    EXPECT_NE(*base, *extractor->Extract(WithKnob(*task, "vec", 4))) << FeatureKindName(kind);
    EXPECT_NE(*base, *extractor->Extract(WithKnob(*task, "kc", 64))) << FeatureKindName(kind);
    EXPECT_NE(*base, *extractor->Extract(WithKnob(*task, "mr", 4))) << FeatureKindName(kind);
  }
  // The loop order and the unrolling change the nest, not just the numbers in it.
  auto itervar = FeatureExtractor::Create(FeatureKind::kItervar, *task);
  EXPECT_NE(*itervar->Extract(WithKnob(*task, "order", "nm")),
            *itervar->Extract(WithKnob(*task, "order", "mn")));
  EXPECT_NE(*itervar->Extract(WithKnob(*task, "unroll_k", 1)),
            *itervar->Extract(WithKnob(*task, "unroll_k", 4)));
  EXPECT_NE(*itervar->Extract(WithKnob(*task, "pack_a", 0)),
            *itervar->Extract(WithKnob(*task, "pack_a", 1)));
  // A prefetch is a touch of its buffer in the loop that issues it.
  EXPECT_NE(*itervar->Extract(WithKnob(*task, "prefetch_b", 0)),
            *itervar->Extract(WithKnob(*task, "prefetch_b", 16)));
}

TEST(FeatureExtractorTest, KnobFeaturesAreTheConfigValues) {
  auto task = DensePackTask(256, 256, 256);
  auto extractor = FeatureExtractor::Create(FeatureKind::kKnob, *task);
  ASSERT_TRUE(extractor.ok());
  EXPECT_EQ(extractor->num_features(), 11);  // ten knobs, then prefetch_b
  auto row = extractor->Extract(WithKnob(*task, "order", "mn"));
  ASSERT_TRUE(row.ok());
  EXPECT_EQ((*row)[0], 8);  // vec
  EXPECT_EQ((*row)[2], 6);  // mr
  EXPECT_EQ((*row)[8], 1);  // order "mn" is the second candidate
}

TEST(FeatureExtractorTest, BadConfigsAreErrors) {
  auto task = DensePackTask(64, 64, 64);
  auto extractor = FeatureExtractor::Create(FeatureKind::kItervar, *task);
  ASSERT_TRUE(extractor.ok());
  EXPECT_EQ(extractor->Extract(task->space().size()).status().code(),
            absl::StatusCode::kOutOfRange);
  // A config of another template's space.
  auto tiled = Task::Make("dense_tiled", "dense", {{"M", 64}, {"N", 64}, {"K", 64}}, "llvm");
  ASSERT_TRUE(tiled.ok());
  absl::StatusOr<Config> foreign = (*tiled)->space().Get(3);
  ASSERT_TRUE(foreign.ok());
  EXPECT_FALSE(extractor->Extract(*foreign).ok());
  auto knob = FeatureExtractor::Create(FeatureKind::kKnob, *task);
  EXPECT_FALSE(knob->Extract(*foreign).ok());
}

// Reports throughput (configs per second on one core); never asserts time.
TEST(FeatureExtractorTest, ReportsItervarThroughputOnTheDenseTemplate) {
  auto task = DensePackTask(1024, 1024, 1024);
  auto extractor = FeatureExtractor::Create(FeatureKind::kItervar, *task);
  ASSERT_TRUE(extractor.ok());
  const int64_t n = 2000;
  const auto start = std::chrono::steady_clock::now();
  int64_t ok = 0;
  for (int64_t i = 0; i < n; ++i) ok += extractor->Extract((i * 7919) % task->space().size()).ok();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(ok, n);
  std::printf("itervar features: %.0f configs/s on one core (%lld configs)\n", n / seconds,
              static_cast<long long>(n));
}

}  // namespace
}  // namespace tunefleet
