// The host functions on a machine no architecture folder describes: no
// features, no flushes, a plain spin. Each described architecture's
// host.cc is compiled under its own macro instead.
#if !defined(__x86_64__) && !defined(__aarch64__)

#include "target/host.h"

namespace tunefleet {

const Arch* HostArch() { return nullptr; }
std::string HostCpuFeatures() { return ""; }
void CpuRelax() {}
void FlushCacheLines(absl::Span<const CacheFlushRange> ranges) { (void)ranges; }

}  // namespace tunefleet

#endif
