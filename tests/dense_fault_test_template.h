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
// It is registered (FindTemplate / AllTemplates) only while the environment
// variable TUNEFLEET_ENABLE_TEST_TEMPLATES is "1" — read at each lookup, so a
// test may setenv() first — and it is never a workload's default template.
#ifndef TUNEFLEET_TUNER_CORE_TEMPLATES_DENSE_FAULT_TEST_TEMPLATE_H_
#define TUNEFLEET_TUNER_CORE_TEMPLATES_DENSE_FAULT_TEST_TEMPLATE_H_

#include <cstdint>

#include "tuner_core/templates/template.h"

namespace tunefleet {

class DenseFaultTestTemplate final : public Template {
 public:
  // Out-of-bounds element index of the "segv" store, and the extent of the
  // "hang" repeat loop.
  static constexpr int64_t kFaultIndex = int64_t{1} << 40;
  static constexpr int64_t kHangRepeats = int64_t{1} << 40;

  const std::string& name() const override { return name_; }
  const std::string& workload_name() const override { return workload_; }
  const std::string& description() const override { return description_; }
  absl::StatusOr<ConfigSpace> DefineSpace(const Workload& workload) const override;
  absl::StatusOr<ir::LoweredFunc> Instantiate(const Workload& workload,
                                              const Config& config) const override;

 private:
  std::string name_ = "dense_fault.test";
  std::string workload_ = "dense";
  std::string description_ =
      "TEST ONLY: dense with knob fault = none | segv (out-of-bounds store) | hang (near-endless loop)";
};

// Whether TUNEFLEET_ENABLE_TEST_TEMPLATES is "1" right now.
bool TestTemplatesEnabled();

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_TEMPLATES_DENSE_FAULT_TEST_TEMPLATE_H_
