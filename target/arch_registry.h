// The architectures the project describes (target/arch.h), looked up by
// triple or name.
//
//   const Arch* arch = FindArch("aarch64-linux-gnu");  // Aarch64Arch()
//   FindArch("riscv64");                               // nullptr
#ifndef TUNEFLEET_TARGET_ARCH_REGISTRY_H_
#define TUNEFLEET_TARGET_ARCH_REGISTRY_H_

#include <string>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "target/arch.h"

namespace tunefleet {

// Every architecture the project describes, in a fixed order.
absl::Span<const Arch* const> AllArchs();

// The architecture of a triple ("x86_64-unknown-linux-gnu") or a bare name
// ("aarch64", as `uname -m` says it); nullptr when none matches.
const Arch* FindArch(absl::string_view triple_or_name);

// "x86_64-*, aarch64-*, nvptx64-*": for error messages.
std::string SupportedTriples();

}  // namespace tunefleet

#endif  // TUNEFLEET_TARGET_ARCH_REGISTRY_H_
