#include "common/process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/clock.h"
#include "common/file_util.h"

extern char** environ;

namespace tunefleet {
namespace {

bool IsExecutable(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

std::string SelfDir() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return "";
  std::string exe(buf, static_cast<size_t>(n));
  return exe.substr(0, exe.rfind('/'));
}

std::string SelfExe() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  return n <= 0 ? "" : std::string(buf, static_cast<size_t>(n));
}

}  // namespace

absl::StatusOr<Process> Process::Spawn(const std::vector<std::string>& argv,
                                       const std::string& log_path,
                                       const std::vector<std::string>& env) {
  if (argv.empty()) return absl::InvalidArgumentError("Process::Spawn: empty argv");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (!log_path.empty()) {
    posix_spawn_file_actions_addopen(&actions, 1, log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND,
                                     0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
  }
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK);
  posix_spawnattr_setpgroup(&attr, 0);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);

  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) env_strings.emplace_back(*e);
  env_strings.push_back(absl::StrCat("TUNEFLEET_PARENT_PID=", getpid()));
  for (const std::string& e : env) env_strings.push_back(e);
  std::vector<char*> envp;
  for (std::string& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = argv;
  std::vector<char*> c_argv;
  for (std::string& a : args) c_argv.push_back(a.data());
  c_argv.push_back(nullptr);

  pid_t pid = -1;
  int rc = posix_spawn(&pid, args[0].c_str(), &actions, &attr, c_argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    return absl::InternalError(
        absl::StrCat("cannot start ", absl::StrJoin(argv, " "), ": ", std::strerror(rc)));
  }
  Process p;
  p.pid_ = pid;
  return p;
}

Process::Process(Process&& other) noexcept : pid_(other.pid_), exit_status_(other.exit_status_) {
  other.pid_ = -1;
}

Process& Process::operator=(Process&& other) noexcept {
  if (this != &other) {
    Stop(2.0);
    pid_ = other.pid_;
    exit_status_ = other.exit_status_;
    other.pid_ = -1;
  }
  return *this;
}

Process::~Process() { Stop(2.0); }

bool Process::running() {
  if (pid_ <= 0 || exit_status_.has_value()) return false;
  return !Wait(0).has_value();
}

void Process::Kill(int signal) {
  if (pid_ > 0 && !exit_status_.has_value()) ::kill(pid_, signal);
}

std::optional<int> Process::Wait(double timeout_s) {
  if (pid_ <= 0) return std::nullopt;
  if (exit_status_.has_value()) return exit_status_;
  const Stopwatch waited;
  while (true) {
    int status = 0;
    pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      exit_status_ = status;
      return status;
    }
    if (r < 0 && errno != EINTR) {
      exit_status_ = -1;
      return -1;
    }
    if (waited.ElapsedSeconds() >= timeout_s) return std::nullopt;
    SystemClock().SleepSeconds(0.005);
  }
}

int Process::Stop(double grace_s) {
  if (pid_ <= 0) return 0;
  if (!exit_status_.has_value()) {
    ::kill(pid_, SIGTERM);
    if (!Wait(grace_s).has_value()) {
      ::kill(pid_, SIGKILL);
      Wait(10.0);
    }
  }
  return exit_status_.value_or(-1);
}

[[nodiscard]] absl::StatusOr<std::string> FindOnPath(const std::string& name) {
  const char* path_variable = std::getenv("PATH");
  const std::string search_path =
      path_variable != nullptr && *path_variable != '\0' ? path_variable : "/usr/bin:/bin";
  for (absl::string_view dir : absl::StrSplit(search_path, ':', absl::SkipEmpty())) {
    std::string candidate = absl::StrCat(dir, "/", name);
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return absl::NotFoundError(absl::StrCat(name, " is not an executable in PATH=", search_path));
}

[[nodiscard]] absl::StatusOr<std::string> FindFleetBinary(const std::string& package,
                                                          const std::string& name) {
  std::vector<std::string> tried;
  auto check = [&](const std::string& path) {
    tried.push_back(path);
    return IsExecutable(path);
  };
  const std::string self_dir = SelfDir();
  if (check(self_dir + "/" + name)) return self_dir + "/" + name;
  if (const char* dir = std::getenv("TUNEFLEET_BIN_DIR"); dir != nullptr) {
    if (check(absl::StrCat(dir, "/", name))) return absl::StrCat(dir, "/", name);
  }
  std::vector<std::string> roots = {SelfExe() + ".runfiles"};
  if (const char* r = std::getenv("RUNFILES_DIR")) roots.push_back(r);
  if (const char* r = std::getenv("TEST_SRCDIR")) roots.push_back(r);
  for (const std::string& root : roots) {
    std::string path = absl::StrCat(root, "/tunefleet/", package, "/", name);
    if (check(path)) return path;
  }
  // bazel-bin layout: <bin>/cli/tunefleet -> <bin>/<package>/<name>.
  std::string sibling = absl::StrCat(self_dir, "/../", package, "/", name);
  if (check(sibling)) return sibling;
  return absl::NotFoundError(absl::StrCat("cannot find ", name, "; tried ",
                                          absl::StrJoin(tried, ", "), " (set TUNEFLEET_BIN_DIR)"));
}

[[nodiscard]] absl::StatusOr<int> WaitForPortFile(const std::string& path, double timeout_s,
                                                  Process* owner) {
  const Stopwatch waited;
  while (waited.ElapsedSeconds() < timeout_s) {
    absl::StatusOr<std::string> text = ReadFileToString(path, kMaxSmallFileBytes);
    int port = 0;
    if (text.ok() && absl::SimpleAtoi(absl::StripAsciiWhitespace(*text), &port) && port > 0) {
      return port;
    }
    if (owner != nullptr && !owner->running()) {
      return absl::FailedPreconditionError(
          absl::StrCat("the process that should write ", path, " exited"));
    }
    SystemClock().SleepSeconds(0.02);
  }
  return absl::DeadlineExceededError(absl::StrCat("no port in ", path, " after ", timeout_s, " s"));
}

}  // namespace tunefleet
