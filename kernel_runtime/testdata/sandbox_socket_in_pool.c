/* Sandbox attack: opens a socket from the runtime's pool threads (the
 * filter must cover every thread, not only the one that installed it). */
#include <sys/socket.h>
#include <unistd.h>

#include "kernel_runtime/testdata/dense_kernel_common.h"

static void RowThenSocket(int64_t m, void* closure) {
  DenseRow(m, closure);
  const int fd = socket(AF_INET, SOCK_DGRAM, 0);
  if (fd >= 0) close(fd);
}

int32_t dense_kernel(void** buffers, const TfRuntime* runtime) {
  DenseArgs args = {(const float*)buffers[0], (const float*)buffers[1], (float*)buffers[2]};
  runtime->parallel_for(runtime->context, TEST_DENSE_M, RowThenSocket, &args);
  return 0;
}
