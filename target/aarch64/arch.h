// AArch64 with NEON (32 128-bit registers; Cortex-A53/A72 boards, Neoverse
// servers), SVE where the machine reports it.
#ifndef TUNEFLEET_TARGET_AARCH64_ARCH_H_
#define TUNEFLEET_TARGET_AARCH64_ARCH_H_

#include <cstdint>
#include <string>

#include "target/arch.h"

namespace tunefleet {

const Arch& Aarch64Arch();

// The names of the AArch64 HWCAP/HWCAP2 bits set in `hwcap`/`hwcap2`
// (Linux's arch/arm64/kernel/cpuinfo.c spelling), space-separated. Any host
// decodes them (tests check the table on x86).
std::string Aarch64HwcapNames(uint64_t hwcap, uint64_t hwcap2);

}  // namespace tunefleet

#endif  // TUNEFLEET_TARGET_AARCH64_ARCH_H_
