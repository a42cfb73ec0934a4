// Links one relocatable object into a shared object with LLVM's lld
// (`ld.lld-19 -shared`), run as a child process through posix_spawn so the
// builder's large address space is never copied. The kernel needs no libc
// at link time: any libc symbol LLVM introduced (memset, memcpy) is resolved
// when the device agent dlopens the result.
#ifndef TUNEFLEET_TOOLCHAIN_LINKER_H_
#define TUNEFLEET_TOOLCHAIN_LINKER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "toolchain/codegen/target.h"

namespace tunefleet {

struct LinkOptions {
  // Empty: the first of ld.lld-19, ld.lld found on PATH or in /usr/bin.
  std::string lld_path;
};

[[nodiscard]] absl::StatusOr<std::string> LinkSharedObject(const std::string& object_bytes,
                                                           const TargetSpec& target,
                                                           const LinkOptions& options);

// Links several relocatable objects (files) into the shared object
// `output_path`: what `tunefleet compile` does with a model's kernels and
// data. Internal naming lld's log when it fails.
[[nodiscard]] absl::Status LinkSharedObjectFiles(const std::vector<std::string>& object_paths,
                                                 const std::string& output_path,
                                                 const LinkOptions& options);

}  // namespace tunefleet

#endif  // TUNEFLEET_TOOLCHAIN_LINKER_H_
