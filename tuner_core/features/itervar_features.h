// `itervar` features (AutoTVM's default for the XGBoost cost model): one
// fixed-size block per loop of the loop nest, in kItervarLoops slots,
// zero-padded. A loop's home slot is a hash of its variable's name, so the
// same loop of a template (say the micro-kernel's k loop) lands in the same
// place in every config and every shape even when other loops are absent
// (templates drop loops of extent 1); a taken slot passes the loop on to the
// next free one. Loops claim slots in priority order: the chain of loops
// enclosing the hottest loop (most iterations), outermost first, then the
// others by iterations (ties in program order). A loop's block is
// then, for the kItervarBuffers buffers it accesses most (ties: first
// touched), log2(1+x) of bytes touched, reuse, stride and accesses.
// The length is the same for every task, so rows of different shapes train
// one model (transfer learning).
#ifndef TUNEFLEET_TUNER_CORE_FEATURES_ITERVAR_FEATURES_H_
#define TUNEFLEET_TUNER_CORE_FEATURES_ITERVAR_FEATURES_H_

#include <vector>

#include "tuner_core/features/loop_nest_analysis.h"

namespace tunefleet::features {

inline constexpr int kItervarLoops = 24;
inline constexpr int kItervarBuffers = 5;
inline constexpr int kItervarLoopFields = 8;
inline constexpr int kItervarBufferFields = 4;
inline constexpr int kItervarPerLoop = kItervarLoopFields + kItervarBuffers * kItervarBufferFields;
inline constexpr int kItervarFeatureLength = kItervarLoops * kItervarPerLoop;

// Appends exactly kItervarFeatureLength values to `out`.
void AppendItervarFeatures(const LoopNestAnalysis& nest, std::vector<float>& out);

}  // namespace tunefleet::features

#endif  // TUNEFLEET_TUNER_CORE_FEATURES_ITERVAR_FEATURES_H_
