// The machine this process runs on, through the Arch it was compiled for.
// Each architecture's folder implements these in its host.cc, compiled only
// for that architecture (guarded by its compiler macro); host_other.cc is
// the fallback for a machine no folder describes. Used by the kernel runtime
// (spin waits, cache flushes between timed repeats) and by compiled models
// (the machine and feature check when a library is opened).
//
//   if (HostArch() == nullptr || HostArch()->elf_machine() != machine) ...
//   FlushCacheLines({{input, bytes}});   // the next read comes from memory
#ifndef TUNEFLEET_TARGET_HOST_H_
#define TUNEFLEET_TARGET_HOST_H_

#include <cstddef>
#include <string>

#include "absl/types/span.h"
#include "target/arch.h"

namespace tunefleet {

// The architecture this binary was compiled for; nullptr on one the project
// does not describe.
const Arch* HostArch();

// This machine's CPU features, space-separated, named as Arch::ModelFeatures'
// host names are ("avx2 fma avx512f ...", "fp asimd ..."); "" when nothing
// can be read.
std::string HostCpuFeatures();

// Tells the core the thread is busy-waiting (x86 PAUSE, AArch64 YIELD).
void CpuRelax();

struct CacheFlushRange {
  const void* data;
  size_t bytes;
};

// Writes back and invalidates every cache line of `ranges` from all cache
// levels (x86: clflush per line, then mfence; AArch64: `dc civac` per line of
// CTR_EL0's size, then dsb), so the next read of them comes from memory.
void FlushCacheLines(absl::Span<const CacheFlushRange> ranges);

}  // namespace tunefleet

#endif  // TUNEFLEET_TARGET_HOST_H_
