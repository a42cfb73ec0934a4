// Loads a compiled kernel (a shared object received as bytes) into this
// process and finds its entry point, without writing it to the filesystem.
//
// Use it wherever an artifact must become callable code: the runner child
// loads one per trial and unloads it when the trial ends.
//
//   TF_ASSIGN_OR_RETURN(SharedObject so,
//                       SharedObject::LoadFromBytes(bytes, artifact_hash));
//   TF_ASSIGN_OR_RETURN(TfKernelEntry entry, so.FindKernelEntry("dense"));
//   int32_t rc = entry(args, pool.runtime());
//
// The bytes go into an anonymous memory file (memfd_create) that dlopen reads
// through /proc/self/fd/N: nothing touches a disk, there is nothing to clean
// up after a crash, and two agents on one machine cannot collide on a path.
// Where memfd_create is unavailable (old kernels, seccomp) the bytes go to a
// temporary file in $TMPDIR (default /tmp) that is unlinked right after
// dlopen.
//
// dlopen runs the object's constructors in this process, so load only in a
// process that may crash (the runner child), never in the agent itself.
#ifndef TUNEFLEET_KERNEL_RUNTIME_KERNEL_LOADER_H_
#define TUNEFLEET_KERNEL_RUNTIME_KERNEL_LOADER_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/kernel_abi.h"

namespace tunefleet {

// A dlopen'ed shared object, dlclose'd on destruction. Move-only. Symbols
// found through it are valid only while it lives.
class SharedObject {
 public:
  // Loads `bytes` (an ELF shared object) with RTLD_NOW | RTLD_LOCAL, so an
  // unresolved symbol fails here rather than in the middle of a timing run.
  // `name_for_errors` (e.g. the artifact hash) only labels error messages.
  // Errors: InvalidArgument for empty bytes or a file dlopen rejects (the
  // message carries dlerror's text), Internal when no memory file or
  // temporary file can be made.
  [[nodiscard]] static absl::StatusOr<SharedObject> LoadFromBytes(
      absl::string_view bytes, absl::string_view name_for_errors);

  SharedObject(SharedObject&& other) noexcept;
  SharedObject& operator=(SharedObject&& other) noexcept;
  SharedObject(const SharedObject&) = delete;
  SharedObject& operator=(const SharedObject&) = delete;
  ~SharedObject();

  // The address of `symbol`; NotFound naming the symbol (and dlerror's text)
  // when the object does not export it.
  [[nodiscard]] absl::StatusOr<void*> FindSymbol(const std::string& symbol) const;
  // FindSymbol, typed as a kernel entry point (common/kernel_abi.h).
  [[nodiscard]] absl::StatusOr<TfKernelEntry> FindKernelEntry(const std::string& symbol) const;

 private:
  SharedObject(void* handle, int memfd, std::string name);
  void Reset();

  void* handle_ = nullptr;
  // The memory file backing handle_, kept open while loaded so that no other
  // live object is ever opened under the same /proc/self/fd/N path (glibc
  // matches already-loaded objects by path). -1 for the temp-file fallback.
  int memfd_ = -1;
  std::string name_;
};

}  // namespace tunefleet

#endif  // TUNEFLEET_KERNEL_RUNTIME_KERNEL_LOADER_H_
