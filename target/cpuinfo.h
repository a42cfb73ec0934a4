// Reading /proc/cpuinfo's "key : value" lines, the one way every caller does.
//
//   CpuinfoValue(cpuinfo, "model name");  // "AMD EPYC 9654 96-Core Processor"
//   CpuinfoValue(cpuinfo, "Features");    // "fp asimd evtstrm ..." (AArch64)
#ifndef TUNEFLEET_TARGET_CPUINFO_H_
#define TUNEFLEET_TARGET_CPUINFO_H_

#include <string>

#include "absl/strings/string_view.h"

namespace tunefleet {

// The value of the first line whose key (before the colon, without the
// surrounding blanks) is `key`, without surrounding blanks; "" if there is none.
std::string CpuinfoValue(absl::string_view cpuinfo, absl::string_view key);

// This machine's /proc/cpuinfo; "" when it cannot be read.
std::string ReadHostCpuinfo();

}  // namespace tunefleet

#endif  // TUNEFLEET_TARGET_CPUINFO_H_
