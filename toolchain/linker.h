// Links one relocatable object into a shared object with LLVM's lld
// (`ld.lld -shared`). By default lld runs in this process, as a library
// (liblld-19-dev's ELF driver): starting ld.lld-19 costs about 25 ms per
// link on its own (the loader maps and relocates libLLVM), a fifth of a
// typical kernel's build, and every candidate of a search is linked once.
// lld's library entry keeps its state in globals, so links are serialized
// (a few milliseconds each); a link that leaves lld unable to run again
// (lldMain's canRunAgain) makes every later link of the process use the
// child process: ld.lld-19 through posix_spawn, so the builder's large
// address space is never copied. The kernel needs no libc at link time:
// any libc symbol LLVM introduced (memset, memcpy) is resolved when the
// device agent dlopens the result.
#ifndef TUNEFLEET_TOOLCHAIN_LINKER_H_
#define TUNEFLEET_TOOLCHAIN_LINKER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "toolchain/codegen/target.h"

namespace tunefleet {

struct LinkOptions {
  // false: always start ld.lld as a child process (the in-process linker's
  // twin, for comparison and as the fallback).
  bool in_process = true;
  // The child process's program. Empty: the first of ld.lld-19, ld.lld
  // found on PATH or in /usr/bin.
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
