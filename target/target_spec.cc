#include "target/target_spec.h"

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"

namespace tunefleet {

int TargetSpec::sm_version() const {
  int sm = 0;
  if (!is_cuda() || !absl::StartsWith(cpu, "sm_") || !absl::SimpleAtoi(cpu.substr(3), &sm))
    return 0;
  return sm;
}

std::string TargetSpec::family() const {
  if (arch == nullptr) return std::string(triple.substr(0, triple.find('-')));
  return arch->Family(vectors(), cpu);
}

}  // namespace tunefleet
