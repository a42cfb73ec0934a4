#include "kernel_runtime/runner_protocol.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/clock.h"

namespace tunefleet {
namespace {

constexpr size_t kStatusPageBytes = 4096;
static_assert(sizeof(RunnerStatusPage) <= kStatusPageBytes);

// Blocks SIGPIPE in this thread for its lifetime, so a write to a pipe whose
// reader died fails with EPIPE instead of killing the whole process; the
// SIGPIPE such a write raised is consumed before the mask is restored. This
// keeps the process's signal dispositions untouched (the agent is a library
// user's process too).
class ScopedSigpipeSuppression {
 public:
  ScopedSigpipeSuppression() {
    sigemptyset(&sigpipe_);
    sigaddset(&sigpipe_, SIGPIPE);
    sigset_t pending;
    sigemptyset(&pending);
    sigpending(&pending);
    already_pending_ = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &sigpipe_, &old_mask_);
  }
  ~ScopedSigpipeSuppression() { pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr); }

  // Call after a write failed with EPIPE.
  void ConsumeRaisedSigpipe() {
    if (already_pending_) return;  // not ours to swallow
    const struct timespec no_wait = {0, 0};
    while (sigtimedwait(&sigpipe_, nullptr, &no_wait) < 0 && errno == EINTR) {
    }
  }

 private:
  sigset_t sigpipe_;
  sigset_t old_mask_;
  bool already_pending_ = false;
};

// Waits until `fd` is ready for `events` (or hung up / in error: the next
// read or write reports those) or the deadline passes.
[[nodiscard]] absl::Status WaitUntilReady(int fd, short events, int64_t deadline_nanos) {
  for (;;) {
    int timeout_ms = -1;
    if (deadline_nanos != kNoDeadline) {
      const int64_t left = deadline_nanos - SystemClock().NowNanos();
      if (left <= 0) return absl::DeadlineExceededError("deadline passed");
      // Round up: a poll that wakes a little early just loops.
      timeout_ms = static_cast<int>(std::min<int64_t>((left + 999'999) / 1'000'000, INT_MAX));
    }
    struct pollfd pfd = {fd, events, 0};
    const int ready = poll(&pfd, 1, timeout_ms);
    if (ready > 0) return absl::OkStatus();
    if (ready < 0 && errno != EINTR) {
      return absl::InternalError(absl::StrCat("poll failed: ", std::strerror(errno)));
    }
  }
}

}  // namespace

const char* RunnerStageDescription(RunnerStage stage) {
  switch (stage) {
    case RunnerStage::kIdle:
      return "idle or reading a request";
    case RunnerStage::kPreparingWorkload:
      return "preparing the workload's tensors and reference outputs";
    case RunnerStage::kLoadingKernel:
      return "loading the kernel (dlopen runs the object's constructors; a GPU kernel's PTX is "
             "JIT-compiled)";
    case RunnerStage::kCheckRun:
      return "running the kernel (correctness check run)";
    case RunnerStage::kComparing:
      return "comparing the kernel's outputs with the reference";
    case RunnerStage::kTimingRuns:
      return "running the kernel (timing runs)";
    case RunnerStage::kWritingResult:
      return "writing the result";
    case RunnerStage::kExiting:
      return "writing its last result before exiting (the CUDA context was lost to a GPU fault, "
             "or the child spent half its CPU time limit)";
    case RunnerStage::kCoolingDown:
      return "cooling down after the measurement (cooldown_interval_s)";
  }
  return "in an unknown stage";
}

std::string ReadForbiddenSyscall(const RunnerStatusPage* page) {
  if (page == nullptr || page->forbidden_syscall_set.load(std::memory_order_acquire) == 0) {
    return "";
  }
  std::string name;
  for (size_t i = 0; i + 1 < sizeof(page->forbidden_syscall); ++i) {
    const char c = page->forbidden_syscall[i];
    if (c == '\0') break;
    const bool allowed = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
    name.push_back(allowed ? c : '?');
  }
  return name;
}

std::vector<std::string> SandboxedChildEnvironment() {
  std::vector<std::string> kept;
  for (const char* name : {"LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES", "TUNEFLEET_LOG_LEVEL"}) {
    if (const char* value = std::getenv(name); value != nullptr) {
      kept.push_back(absl::StrCat(name, "=", value));
    }
  }
  return kept;
}

RunnerStatusPage* MapRunnerStatusPage(int fd) {
  if (fd < 0) return nullptr;
  void* addr = mmap(nullptr, kStatusPageBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (addr == MAP_FAILED) return nullptr;
  // A fresh memfd reads as zeros: stage kIdle, counters 0, which are valid
  // values of these atomics.
  return static_cast<RunnerStatusPage*>(addr);
}

void UnmapRunnerStatusPage(RunnerStatusPage* page) {
  if (page != nullptr) munmap(page, kStatusPageBytes);
}

int CreateRunnerStatusFd() {
  int fd = memfd_create("tunefleet-runner-status", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return -1;
  if (ftruncate(fd, kStatusPageBytes) != 0 ||
      fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

[[nodiscard]] absl::Status WaitUntilReadable(int fd, int64_t deadline_nanos) {
  return WaitUntilReady(fd, POLLIN, deadline_nanos);
}

[[nodiscard]] absl::Status WriteAllBytes(int fd, absl::string_view bytes, int64_t deadline_nanos) {
  ScopedSigpipeSuppression no_sigpipe;
  while (!bytes.empty()) {
    const ssize_t written = write(fd, bytes.data(), bytes.size());
    if (written > 0) {
      bytes.remove_prefix(static_cast<size_t>(written));
      continue;
    }
    if (written < 0 && errno == EINTR) continue;
    if (written < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      absl::Status ready = WaitUntilReady(fd, POLLOUT, deadline_nanos);
      if (!ready.ok()) return ready;
      continue;
    }
    if (written < 0 && errno == EPIPE) {
      no_sigpipe.ConsumeRaisedSigpipe();
      return absl::UnavailableError("the reading end of the pipe is closed");
    }
    return absl::InternalError(
        absl::StrCat("write failed: ", written < 0 ? std::strerror(errno) : "wrote 0 bytes"));
  }
  return absl::OkStatus();
}

[[nodiscard]] absl::StatusOr<std::string> ReadExactBytes(int fd, size_t size,
                                                         int64_t deadline_nanos) {
  std::string bytes(size, '\0');
  size_t received = 0;
  while (received < size) {
    const ssize_t got = read(fd, bytes.data() + received, size - received);
    if (got > 0) {
      received += static_cast<size_t>(got);
      continue;
    }
    if (got == 0) {
      return absl::UnavailableError(absl::StrCat("the writing end of the pipe closed after ",
                                                 received, " of ", size, " bytes"));
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      absl::Status ready = WaitUntilReady(fd, POLLIN, deadline_nanos);
      if (!ready.ok()) return ready;
      continue;
    }
    return absl::InternalError(absl::StrCat("read failed: ", std::strerror(errno)));
  }
  return bytes;
}

[[nodiscard]] absl::Status WriteFrame(int fd, absl::string_view payload, int64_t deadline_nanos) {
  if (payload.size() > kMaxRunnerFrameBytes) {
    return absl::InvalidArgumentError(absl::StrCat("message of ", payload.size(),
                                                   " bytes exceeds the runner's frame limit of ",
                                                   kMaxRunnerFrameBytes));
  }
  const uint32_t size = static_cast<uint32_t>(payload.size());
  const unsigned char header[4] = {
      static_cast<unsigned char>(size), static_cast<unsigned char>(size >> 8),
      static_cast<unsigned char>(size >> 16), static_cast<unsigned char>(size >> 24)};
  // One buffer, one write where it fits: fewer wake-ups of the reader.
  std::string frame(reinterpret_cast<const char*>(header), sizeof(header));
  frame.append(payload.data(), payload.size());
  return WriteAllBytes(fd, frame, deadline_nanos);
}

[[nodiscard]] absl::StatusOr<std::string> ReadFrame(int fd, int64_t deadline_nanos,
                                                    uint32_t max_bytes) {
  absl::StatusOr<std::string> header = ReadExactBytes(fd, 4, deadline_nanos);
  if (!header.ok()) return header.status();
  const auto* h = reinterpret_cast<const unsigned char*>(header->data());
  const uint32_t size =
      uint32_t{h[0]} | uint32_t{h[1]} << 8 | uint32_t{h[2]} << 16 | uint32_t{h[3]} << 24;
  if (size > max_bytes) {
    return absl::DataLossError(absl::StrCat("frame length ", size, " exceeds the limit of ",
                                            max_bytes, ": the stream is corrupt"));
  }
  return ReadExactBytes(fd, size, deadline_nanos);
}

}  // namespace tunefleet
