// The runner child's view of the file system, narrowed with Landlock before
// the child starts any thread: afterwards no thread of the process (nor any
// it starts) can open a file outside the system's libraries, so a kernel
// cannot read the daemons' keys, tokens, TLS material or store, whatever
// user they share. Kernels arrive in memfds (opened through
// /proc/self/fd/N), which Landlock leaves reachable: they live on a
// kernel-internal mount.
//
//   absl::Status confined = ConfineFiles(FileConfinementFor(driver_library));
//   if (!confined.ok()) ... the caller must not run kernels
//
// Landlock (Linux 5.13+, "landlock" among the active LSMs) confines one
// thread and the threads and processes it starts later, which is why the
// child calls this first, before its status-page watcher and its pool. On a
// kernel without Landlock ConfineFiles fails, naming the cause, and the
// agent refuses to measure unless told --sandbox_files=false.
#ifndef TUNEFLEET_KERNEL_RUNTIME_FILE_CONFINEMENT_H_
#define TUNEFLEET_KERNEL_RUNTIME_FILE_CONFINEMENT_H_

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace tunefleet {

struct FileConfinement {
  // Directories (and everything beneath) that may be read and mapped
  // executable: the system's libraries, the CUDA driver's directory.
  std::vector<std::string> readable_trees;
  // Single files that may be read (the dynamic loader's cache, cpuinfo).
  std::vector<std::string> readable_files;
  // Files that may also be opened for writing: the GPU's device nodes,
  // which the CUDA driver reopens read-write (the seccomp filter still
  // refuses every write open once it is loaded).
  std::vector<std::string> device_files;
};

// What a measurement child needs: /usr, /lib, /lib64 (where they exist),
// the loader cache, /proc/cpuinfo and the CPUs' sysfs; the directories of
// $LD_LIBRARY_PATH and of `cuda_driver_library` (when it is a path); and,
// on a host with /dev/nvidiactl, the /dev/nvidia* nodes plus /proc and /sys
// read-only (the driver reads its own entries there).
FileConfinement FileConfinementFor(const std::string& cuda_driver_library);

// The Landlock ABI this kernel offers, 0 when it has none.
int LandlockAbiVersion();
// OK when this kernel offers Landlock; FailedPrecondition naming the cause
// and the way out (--sandbox_files=false) when it does not.
[[nodiscard]] absl::Status LandlockAvailable();

// Applies `confinement` to this thread and every thread and process it
// starts from now on; paths that do not exist are skipped. Irreversible.
// FailedPrecondition, naming the cause, when the kernel has no Landlock or
// a rule cannot be added.
[[nodiscard]] absl::Status ConfineFiles(const FileConfinement& confinement);

}  // namespace tunefleet

#endif  // TUNEFLEET_KERNEL_RUNTIME_FILE_CONFINEMENT_H_
