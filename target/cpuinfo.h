// Reading /proc/cpuinfo's "key : value" lines, the one way every caller does.
//
//   CpuinfoValue(cpuinfo, "model name");  // "AMD EPYC 9654 96-Core Processor"
//   CpuinfoValue(cpuinfo, "Features");    // "fp asimd evtstrm ..." (AArch64)
#ifndef TUNEFLEET_TARGET_CPUINFO_H_
#define TUNEFLEET_TARGET_CPUINFO_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace tunefleet {

// The value of the first line whose key (before the colon, without the
// surrounding blanks) is `key`, without surrounding blanks; "" if there is none.
std::string CpuinfoValue(absl::string_view cpuinfo, absl::string_view key);

// This machine's /proc/cpuinfo; "" when it cannot be read.
std::string ReadHostCpuinfo();

// A cache's size as /sys/devices/system/cpu/cpu*/cache/index*/size writes
// it ("8192K", "32M", "1G", "512"), in bytes; 0 for anything else.
int64_t ParseCacheSize(absl::string_view text);

// The size in bytes of the highest-level cache cpu0 lists under
// /sys/devices/system/cpu/cpu0/cache (the last-level cache as this machine,
// a VM included, reports it: one core complex's L3 on a chip of several,
// where sysconf's figure is often the whole chip's); 0 when none can be read.
int64_t HostLastLevelCacheBytes();

}  // namespace tunefleet

#endif  // TUNEFLEET_TARGET_CPUINFO_H_
