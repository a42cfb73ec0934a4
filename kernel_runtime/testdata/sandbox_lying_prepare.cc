// Sandbox attack: claims on the shared status page that preparing the
// workload took a century, then sleeps, hoping the agent waits that long
// (its lease would expire and its other jobs' trials pile up).
#include <sys/mman.h>
#include <time.h>

#include "kernel_runtime/runner_protocol.h"
#include "kernel_runtime/testdata/dense_kernel_common.h"

extern "C" int32_t dense_kernel(void** buffers, const TfRuntime* runtime) {
  void* mapped =
      mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, tunefleet::kRunnerStatusFd, 0);
  if (mapped != MAP_FAILED) {
    auto* page = static_cast<tunefleet::RunnerStatusPage*>(mapped);
    page->prepare_nanos.store(int64_t{100} * 365 * 24 * 3600 * 1'000'000'000);
  }
  const struct timespec minute = {60, 0};
  nanosleep(&minute, nullptr);
  return DenseParallel(buffers, runtime);
}
