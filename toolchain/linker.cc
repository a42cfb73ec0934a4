#include "toolchain/linker.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/file_util.h"
#include "lld/Common/Driver.h"
#include "llvm/Support/CrashRecoveryContext.h"
#include "llvm/Support/raw_ostream.h"

extern char** environ;

LLD_HAS_DRIVER(elf)

namespace tunefleet {
namespace {

// lld's library entry point keeps its state in globals: one link at a time,
// and none once a link has left that state unusable.
ABSL_CONST_INIT absl::Mutex in_process_mutex(absl::kConstInit);
bool in_process_usable ABSL_GUARDED_BY(in_process_mutex) = true;

// The arguments of `lld -shared` over `objects` into `output` (without the
// program name).
std::vector<std::string> LldArguments(const std::vector<std::string>& objects,
                                      const std::string& output) {
  std::vector<std::string> args = {"-shared", "--hash-style=gnu", "-O1", "--as-needed", "-o",
                                   output};
  args.insert(args.end(), objects.begin(), objects.end());
  return args;
}

// Runs lld's ELF driver in this process. nullopt: lld can no longer run in
// this process (an earlier link corrupted its state), start ld.lld instead.
[[nodiscard]] std::optional<absl::Status> LinkInProcess(const std::vector<std::string>& arguments) {
  // lld's fatal errors return through a crash recovery context (lldMain's),
  // which needs recovery enabled; otherwise they end the whole process.
  static const bool recovery_enabled = [] {
    llvm::CrashRecoveryContext::Enable();
    return true;
  }();
  (void)recovery_enabled;
  absl::MutexLock lock(&in_process_mutex);
  if (!in_process_usable) return std::nullopt;
  // The program name picks the ELF flavour; one thread: the builds around
  // it already use every core.
  std::vector<const char*> argv = {"ld.lld", "--threads=1"};
  for (const std::string& a : arguments) argv.push_back(a.c_str());
  std::string log;
  llvm::raw_string_ostream log_stream(log);
  const lld::Result result =
      lld::lldMain(argv, log_stream, log_stream, {{lld::Gnu, &lld::elf::link}});
  log_stream.flush();
  if (!result.canRunAgain) in_process_usable = false;
  if (result.retCode != 0) {
    return absl::InternalError(absl::StrCat("linker (lld in process) failed: ", log));
  }
  return absl::OkStatus();
}

std::string FindLld(const LinkOptions& options) {
  if (!options.lld_path.empty()) return options.lld_path;
  for (const char* candidate :
       {"/usr/bin/ld.lld-19", "/usr/lib/llvm-19/bin/ld.lld", "/usr/bin/ld.lld"}) {
    if (access(candidate, X_OK) == 0) return candidate;
  }
  return "ld.lld";
}

std::string TempDir() {
  const char* dir = std::getenv("TMPDIR");
  return (dir && *dir) ? dir : "/tmp";
}

[[nodiscard]] absl::Status WriteAll(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return absl::InternalError(absl::StrCat("write failed: ", std::strerror(errno)));
    done += n;
  }
  return absl::OkStatus();
}

// The linked object (an artifact) or the linker's log.
[[nodiscard]] absl::StatusOr<std::string> ReadFile(const std::string& path) {
  return ReadFileToString(path, kMaxArtifactBytes);
}

// Removes the temporary files (then the private directory they are in, if
// any) whatever path the function leaves by.
struct TempFiles {
  std::vector<std::string> paths;
  std::string dir;
  ~TempFiles() {
    for (const std::string& p : paths) unlink(p.c_str());
    if (!dir.empty()) rmdir(dir.c_str());
  }
};

// Runs lld -shared over `objects` into `output`: in this process when
// `options` ask for it and lld can still run here, else as a child process
// with its log in `log_path`.
[[nodiscard]] absl::Status RunLld(const std::vector<std::string>& objects,
                                  const std::string& output, const std::string& log_path,
                                  const LinkOptions& options) {
  if (options.in_process) {
    std::optional<absl::Status> linked = LinkInProcess(LldArguments(objects, output));
    if (linked.has_value()) return *std::move(linked);
  }
  const std::string lld = FindLld(options);
  std::vector<std::string> args = {lld};
  for (std::string& a : LldArguments(objects, output)) args.push_back(std::move(a));
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  // A name nobody else made, never followed through a link.
  posix_spawn_file_actions_addopen(&actions, 1, log_path.c_str(),
                                   O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, lld.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot start the linker ", lld, ": ", std::strerror(rc),
                     " (install lld-19: scripts/install_deps.sh)"));
  }
  int wstatus = 0;
  while (waitpid(pid, &wstatus, 0) < 0) {
    if (errno != EINTR) return absl::InternalError(absl::StrCat("waitpid: ", std::strerror(errno)));
  }
  if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
    auto log = ReadFile(log_path);
    return absl::InternalError(absl::StrCat("linker ", lld, " failed: ", log.ok() ? *log : ""));
  }
  return absl::OkStatus();
}

}  // namespace

[[nodiscard]] absl::StatusOr<std::string> LinkSharedObject(const std::string& object_bytes,
                                                           const TargetSpec& target,
                                                           const LinkOptions& options) {
  (void)target;  // lld infers the machine from the object file
  // Every file of the link in a directory only this process made (0700):
  // in a shared /tmp, another user cannot plant a link at the names of the
  // output or the log before the linker writes them.
  TempFiles temps;
  std::string dir = TempDir() + "/tunefleet-link-XXXXXX";
  if (mkdtemp(dir.data()) == nullptr) {
    return absl::InternalError(absl::StrCat("cannot create a private temporary directory in ",
                                            TempDir(), ": ", std::strerror(errno)));
  }
  temps.dir = dir;
  const std::string object_path = dir + "/kernel.o";
  const int object_fd =
      open(object_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (object_fd < 0) {
    return absl::InternalError(
        absl::StrCat("cannot create a temporary object file in ", dir, ": ", std::strerror(errno)));
  }
  temps.paths.push_back(object_path);
  absl::Status written = WriteAll(object_fd, object_bytes);
  close(object_fd);
  if (!written.ok()) return written;
  const std::string so_path = dir + "/kernel.so";
  temps.paths.push_back(so_path);
  const std::string log_path = dir + "/link.log";
  temps.paths.push_back(log_path);

  absl::Status linked = RunLld({object_path}, so_path, log_path, options);
  if (!linked.ok()) return linked;
  return ReadFile(so_path);
}

[[nodiscard]] absl::Status LinkSharedObjectFiles(const std::vector<std::string>& object_paths,
                                                 const std::string& output_path,
                                                 const LinkOptions& options) {
  TempFiles temps;
  temps.paths.push_back(output_path + ".link.log");
  // Whatever is at the log's name (a stale log, a planted link) goes first:
  // the log is then created fresh, never written through a link.
  unlink(temps.paths.back().c_str());
  return RunLld(object_paths, output_path, temps.paths.back(), options);
}

}  // namespace tunefleet
