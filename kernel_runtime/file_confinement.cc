#include "kernel_runtime/file_confinement.h"

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <linux/landlock.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace tunefleet {
namespace {

// Access rights by the ABI that introduced them (linux/landlock.h of older
// kernels lacks the later ones).
constexpr uint64_t kAbi1Rights = (uint64_t{1} << 13) - 1;  // EXECUTE .. MAKE_SYM
constexpr uint64_t kRefer = uint64_t{1} << 13;             // ABI 2
constexpr uint64_t kTruncate = uint64_t{1} << 14;          // ABI 3
constexpr uint64_t kIoctlDev = uint64_t{1} << 15;          // ABI 5
constexpr uint64_t kExecute = uint64_t{1} << 0;
constexpr uint64_t kWriteFile = uint64_t{1} << 1;
constexpr uint64_t kReadFile = uint64_t{1} << 2;
constexpr uint64_t kReadDir = uint64_t{1} << 3;

uint64_t HandledRights(int abi) {
  uint64_t rights = kAbi1Rights;
  if (abi >= 2) rights |= kRefer;
  if (abi >= 3) rights |= kTruncate;
  if (abi >= 5) rights |= kIoctlDev;
  return rights;
}

bool Exists(const std::string& path, bool* is_dir) {
  struct stat info;
  if (stat(path.c_str(), &info) != 0) return false;
  *is_dir = S_ISDIR(info.st_mode);
  return true;
}

std::string DirectoryOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return "";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// Adds one rule granting `rights` (cut to what `path` can take: files get no
// directory rights) beneath `path`; a path that does not exist is skipped.
[[nodiscard]] absl::Status AddRule(int ruleset, const std::string& path, uint64_t rights,
                                   uint64_t handled) {
  bool is_dir = false;
  if (path.empty() || !Exists(path, &is_dir)) return absl::OkStatus();
  if (!is_dir) rights &= kExecute | kWriteFile | kReadFile | kTruncate | kIoctlDev;
  const int fd = open(path.c_str(), O_PATH | O_CLOEXEC);
  if (fd < 0) return absl::OkStatus();  // gone since stat, or not ours to open: no rule
  struct landlock_path_beneath_attr beneath = {};
  beneath.allowed_access = rights & handled;
  beneath.parent_fd = fd;
  const long rc = syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &beneath, 0);
  const int error = errno;
  close(fd);
  if (rc != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("sandbox: Landlock rule for ", path, " failed: ", strerror(error)));
  }
  return absl::OkStatus();
}

}  // namespace

int LandlockAbiVersion() {
  const long abi =
      syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
  return abi > 0 ? static_cast<int>(abi) : 0;
}

FileConfinement FileConfinementFor(const std::string& cuda_driver_library) {
  FileConfinement c;
  c.readable_trees = {"/usr", "/lib", "/lib64", "/sys/devices/system/cpu"};
  c.readable_files = {"/etc/ld.so.cache", "/proc/cpuinfo"};
  if (const char* paths = std::getenv("LD_LIBRARY_PATH"); paths != nullptr) {
    for (absl::string_view dir : absl::StrSplit(paths, ':', absl::SkipEmpty())) {
      c.readable_trees.emplace_back(dir);
    }
  }
  if (cuda_driver_library.find('/') != std::string::npos) {
    c.readable_trees.push_back(DirectoryOf(cuda_driver_library));
    // Landlock checks the file a link resolves to (Bazel's runfiles, a
    // driver installed through alternatives).
    if (char* resolved = realpath(cuda_driver_library.c_str(), nullptr); resolved != nullptr) {
      c.readable_trees.push_back(DirectoryOf(resolved));
      free(resolved);
    }
  }
  bool is_dir = false;
  if (Exists("/dev/nvidiactl", &is_dir)) {
    glob_t nodes;
    if (glob("/dev/nvidia*", 0, nullptr, &nodes) == 0) {
      for (size_t i = 0; i < nodes.gl_pathc; ++i) c.device_files.emplace_back(nodes.gl_pathv[i]);
    }
    globfree(&nodes);
    c.readable_trees.insert(c.readable_trees.end(), {"/proc", "/sys"});
  }
  return c;
}

[[nodiscard]] absl::Status LandlockAvailable() {
  if (LandlockAbiVersion() > 0) return absl::OkStatus();
  return absl::FailedPreconditionError(
      "sandbox: this kernel has no Landlock (Linux 5.13+ with 'landlock' among its active LSMs), "
      "so a kernel could read every file this user can; run the agent where it has, or pass "
      "--sandbox_files=false to measure without file confinement");
}

[[nodiscard]] absl::Status ConfineFiles(const FileConfinement& confinement) {
  if (absl::Status available = LandlockAvailable(); !available.ok()) return available;
  const int abi = LandlockAbiVersion();
  const uint64_t handled = HandledRights(abi);
  struct landlock_ruleset_attr attr = {};
  attr.handled_access_fs = handled;
  const long ruleset = syscall(SYS_landlock_create_ruleset, &attr, sizeof(attr), 0);
  if (ruleset < 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("sandbox: creating the Landlock ruleset failed: ", strerror(errno)));
  }
  const int fd = static_cast<int>(ruleset);
  absl::Status added = absl::OkStatus();
  for (const std::string& tree : confinement.readable_trees) {
    if (added.ok()) added = AddRule(fd, tree, kReadFile | kReadDir | kExecute, handled);
  }
  for (const std::string& file : confinement.readable_files) {
    if (added.ok()) added = AddRule(fd, file, kReadFile, handled);
  }
  for (const std::string& node : confinement.device_files) {
    if (added.ok()) added = AddRule(fd, node, kReadFile | kWriteFile | kIoctlDev, handled);
  }
  if (added.ok() && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    added = absl::FailedPreconditionError(
        absl::StrCat("sandbox: PR_SET_NO_NEW_PRIVS failed: ", strerror(errno)));
  }
  if (added.ok() && syscall(SYS_landlock_restrict_self, fd, 0) != 0) {
    added = absl::FailedPreconditionError(
        absl::StrCat("sandbox: Landlock restrict_self failed: ", strerror(errno)));
  }
  close(fd);
  return added;
}

}  // namespace tunefleet
