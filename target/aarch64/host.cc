// The host functions of target/host.h on an AArch64 machine.
#if defined(__aarch64__)

#include "target/host.h"

#include <sys/auxv.h>

#include <cstdint>

#include "target/aarch64/arch.h"
#include "target/cpuinfo.h"

namespace tunefleet {

const Arch* HostArch() { return &Aarch64Arch(); }

// The HWCAP bits first: they are what the kernel -- or qemu-user, which does
// not emulate /proc/cpuinfo for AArch64 -- says the process may use; then
// /proc/cpuinfo's "Features" line where there is one.
std::string HostCpuFeatures() {
  std::string features = Aarch64HwcapNames(getauxval(AT_HWCAP), getauxval(AT_HWCAP2));
  const std::string line = CpuinfoValue(ReadHostCpuinfo(), "Features");
  if (!line.empty()) features = features.empty() ? line : features + " " + line;
  return features;
}

void CpuRelax() { asm volatile("yield" ::: "memory"); }

void FlushCacheLines(absl::Span<const CacheFlushRange> ranges) {
  // CTR_EL0.DminLine: log2 of the smallest data cache line, in 4-byte words.
  uint64_t ctr;
  asm volatile("mrs %0, ctr_el0" : "=r"(ctr));
  const uintptr_t line_bytes = uintptr_t{4} << ((ctr >> 16) & 0xF);
  for (const CacheFlushRange& range : ranges) {
    if (range.bytes == 0) continue;
    const uintptr_t begin = reinterpret_cast<uintptr_t>(range.data) & ~(line_bytes - 1);
    const uintptr_t end = reinterpret_cast<uintptr_t>(range.data) + range.bytes;
    for (uintptr_t line = begin; line < end; line += line_bytes) {
      asm volatile("dc civac, %0" : : "r"(line) : "memory");
    }
  }
  asm volatile("dsb ish" : : : "memory");
}

}  // namespace tunefleet

#endif  // defined(__aarch64__)
