// A TEST-ONLY dense template whose configs misbehave on purpose, so the
// fleet's fault handling (a kernel that crashes, a kernel that never
// returns) can be exercised end to end with real compiled kernels.
//
// Name "dense_fault.test", workload "dense". One "ot" knob, `fault`:
//   "none"  a correct, simple serial dense loop nest (any M, N, K, layout);
//   "segv"  first stores to C at element 1 << 40 (far outside any buffer),
//           so the kernel dies with SIGSEGV when run;
//   "hang"  repeats the whole (correct) accumulation 1 << 40 times; every
//           repeat adds into C, so it has a side effect LLVM cannot fold
//           (fp32 without reassociation) and the kernel effectively never
//           returns.
//
// Linking this library (alwayslink) registers the template (RegisterTemplate
// in tuner_core/templates/template.h), so FindTemplate / AllTemplates see it
// in that binary only: test binaries and //tests:test_builder, never a
// production binary. It is never a workload's default template.
#ifndef TUNEFLEET_TESTS_DENSE_FAULT_TEST_TEMPLATE_H_
#define TUNEFLEET_TESTS_DENSE_FAULT_TEST_TEMPLATE_H_

#include <cstdint>

#include "tuner_core/templates/template.h"

namespace tunefleet {

// Out-of-bounds element index of the "segv" store, and the extent of the
// "hang" repeat loop.
inline constexpr int64_t kDenseFaultIndex = int64_t{1} << 40;
inline constexpr int64_t kDenseFaultHangRepeats = int64_t{1} << 40;

const Template& DenseFaultTestTemplate();

}  // namespace tunefleet

#endif  // TUNEFLEET_TESTS_DENSE_FAULT_TEST_TEMPLATE_H_
