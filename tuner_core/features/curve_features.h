// `curve` features: per buffer, a fixed-length sampled description of how
// reuse grows with the bytes touched. Every loop that accesses a buffer is
// one point (bytes touched beneath it, reuse, accesses); the curves are the
// largest log2(1+reuse) and log2(1+accesses) among points touching at most
// 2^(2s) bytes, sampled at s = 0..kCurveSamples-1 (1 B .. 256 GiB), for the
// kCurveBuffers most accessed buffers, zero-padded. Fixed length for every
// task, and independent of the loop structure's shape (unlike `itervar`).
#ifndef TUNEFLEET_TUNER_CORE_FEATURES_CURVE_FEATURES_H_
#define TUNEFLEET_TUNER_CORE_FEATURES_CURVE_FEATURES_H_

#include <vector>

#include "tuner_core/features/loop_nest_analysis.h"

namespace tunefleet::features {

inline constexpr int kCurveBuffers = 3;
inline constexpr int kCurveSamples = 20;
inline constexpr int kCurveFeatureLength = kCurveBuffers * 2 * kCurveSamples;

// Appends exactly kCurveFeatureLength values to `out`.
void AppendCurveFeatures(const LoopNestAnalysis& nest, std::vector<float>& out);

}  // namespace tunefleet::features

#endif  // TUNEFLEET_TUNER_CORE_FEATURES_CURVE_FEATURES_H_
