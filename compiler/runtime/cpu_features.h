// The CPU features of the machine a compiled model is opened on, named as
// the model's plan names its required features (plan.h): /proc/cpuinfo's
// "flags" on x86-64 ("avx2", "fma", "avx512f"), the kernel's HWCAP names on
// AArch64 ("fp", "asimd", "asimddp", "sve"). On AArch64 the HWCAP bits
// (getauxval) are read first: they are what the kernel -- or qemu-user,
// which does not emulate /proc/cpuinfo for AArch64 -- says the process
// may use; /proc/cpuinfo's "Features" line is added when present.
//
//   const std::string have = HostCpuFeatures();  // "fp asimd evtstrm ..."
//   std::vector<std::string> missing = MissingCpuFeatures(required, have);
#ifndef TUNEFLEET_COMPILER_RUNTIME_CPU_FEATURES_H_
#define TUNEFLEET_COMPILER_RUNTIME_CPU_FEATURES_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace tunefleet {

// This machine's features, space-separated ("" when nothing can be read).
std::string HostCpuFeatures();

// The names of the AArch64 HWCAP/HWCAP2 bits set in `hwcap`/`hwcap2`
// (Linux's arch/arm64/kernel/cpuinfo.c spelling), space-separated.
// Exposed for tests: any host can check the decoding.
std::string Aarch64HwcapNames(uint64_t hwcap, uint64_t hwcap2);

// The first line of a /proc/cpuinfo text labelled `label` ("flags" on x86,
// "Features" on ARM), without the label and colon; "" if there is none.
std::string CpuinfoFeatureLine(const std::string& cpuinfo, absl::string_view label);

}  // namespace tunefleet

#endif  // TUNEFLEET_COMPILER_RUNTIME_CPU_FEATURES_H_
