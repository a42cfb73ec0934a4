#include "target/arch_registry.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "target/aarch64/arch.h"
#include "target/nvptx64/arch.h"
#include "target/x86_64/arch.h"

namespace tunefleet {

absl::Span<const Arch* const> AllArchs() {
  static const Arch* const kArchs[] = {&X86_64Arch(), &Aarch64Arch(), &Nvptx64Arch()};
  return kArchs;
}

const Arch* FindArch(absl::string_view triple_or_name) {
  const absl::string_view name = triple_or_name.substr(0, triple_or_name.find('-'));
  for (const Arch* arch : AllArchs()) {
    if (arch->name() == name) return arch;
  }
  return nullptr;
}

std::string SupportedTriples() {
  return absl::StrJoin(AllArchs(), ", ", [](std::string* out, const Arch* arch) {
    absl::StrAppend(out, arch->name(), "-*");
  });
}

}  // namespace tunefleet
