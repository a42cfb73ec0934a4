#include "bench/feature_speed.h"

#include <chrono>

#include "tuner_core/features/feature_extractor.h"

namespace tunefleet {

std::map<std::string, double> FeatureConfigsPerSecond(const Task& task, int64_t n) {
  std::map<std::string, double> speed;
  for (FeatureKind kind : {FeatureKind::kItervar, FeatureKind::kCurve, FeatureKind::kKnob}) {
    absl::StatusOr<FeatureExtractor> extractor = FeatureExtractor::Create(kind, task);
    if (!extractor.ok()) continue;
    const auto start = std::chrono::steady_clock::now();
    for (int64_t i = 0; i < n; ++i) (void)extractor->Extract((i * 7919) % task.space().size());
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    speed[FeatureKindName(kind)] = n / seconds;
  }
  return speed;
}

}  // namespace tunefleet
