#include "common/cuda_target.h"

#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace tunefleet {

bool IsCudaTarget(const std::string& target) {
  std::vector<std::string> parts = absl::StrSplit(target, ' ', absl::SkipWhitespace());
  return !parts.empty() && parts[0] == "cuda";
}

absl::StatusOr<CudaTargetFlags> ParseCudaTargetFlags(const std::string& target) {
  std::vector<std::string> parts = absl::StrSplit(target, ' ', absl::SkipWhitespace());
  if (parts.empty() || parts[0] != "cuda") {
    return absl::InvalidArgumentError(absl::StrCat("target \"", target, "\" is not a cuda target"));
  }
  CudaTargetFlags flags;
  for (size_t i = 1; i < parts.size(); ++i) {
    const std::string& p = parts[i];
    const size_t eq = p.find('=');
    const std::string flag = p.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : p.substr(eq + 1);
    auto positive = [&](int64_t* out) -> absl::Status {
      if (!absl::SimpleAtoi(value, out) || *out <= 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("target \"", target, "\": \"", p, "\" needs a positive integer"));
      }
      return absl::OkStatus();
    };
    if (flag == "-mcpu" || flag == "-arch") {
      if (!absl::StartsWith(value, "sm_") || !absl::SimpleAtoi(value.substr(3), &flags.sm)) {
        return absl::InvalidArgumentError(
            absl::StrCat("target \"", target, "\": ", flag, " needs sm_NN, got \"", value, "\""));
      }
      flags.arch = value;
    } else if (flag == "-max_threads_per_block") {
      if (absl::Status s = positive(&flags.max_threads_per_block); !s.ok()) return s;
    } else if (flag == "-max_shared_memory_per_block") {
      if (absl::Status s = positive(&flags.max_shared_memory_per_block); !s.ok()) return s;
    } else if (flag == "-registers_per_block") {
      if (absl::Status s = positive(&flags.registers_per_block); !s.ok()) return s;
    } else if (flag != "-keys" && flag != "-thread_warp_size") {
      // TVM attributes that change nothing here are accepted above; anything else is a typo.
      return absl::InvalidArgumentError(absl::StrCat(
          "target \"", target, "\": unknown option \"", p,
          "\" (known: -mcpu/-arch=sm_NN, -max_threads_per_block, -max_shared_memory_per_block, "
          "-registers_per_block)"));
    }
  }
  if (flags.arch.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "target \"", target, "\" needs -mcpu=sm_NN (the device's compute capability, e.g. sm_90 "
        "for H100/H200; `tunefleet devices` shows what each GPU agent reports)"));
  }
  return flags;
}

}  // namespace tunefleet
