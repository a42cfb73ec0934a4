// The host functions of target/host.h on an x86-64 machine.
#if defined(__x86_64__)

#include "target/host.h"

#include <immintrin.h>

#include <cstdint>

#include "target/cpuinfo.h"
#include "target/x86_64/arch.h"

namespace tunefleet {

const Arch* HostArch() { return &X86_64Arch(); }

std::string HostCpuFeatures() { return CpuinfoValue(ReadHostCpuinfo(), "flags"); }

// PAUSE saves power and avoids the memory-order mis-speculation penalty on
// the spin loop's exit.
void CpuRelax() { _mm_pause(); }

void FlushCacheLines(absl::Span<const CacheFlushRange> ranges) {
  constexpr uintptr_t kLine = 64;  // clflush granularity on every x86-64 CPU
  for (const CacheFlushRange& range : ranges) {
    if (range.bytes == 0) continue;
    const uintptr_t begin = reinterpret_cast<uintptr_t>(range.data) & ~(kLine - 1);
    const uintptr_t end = reinterpret_cast<uintptr_t>(range.data) + range.bytes;
    for (uintptr_t line = begin; line < end; line += kLine) {
      _mm_clflush(reinterpret_cast<const void*>(line));
    }
  }
  _mm_mfence();  // clflush is ordered only by fences
}

}  // namespace tunefleet

#endif  // defined(__x86_64__)
