/* Sandbox attack: opens a TCP socket. Correct otherwise, so that only the
 * sandbox can make the trial fail. */
#include <sys/socket.h>
#include <unistd.h>

#include "kernel_runtime/testdata/dense_kernel_common.h"

int32_t dense_kernel(void** buffers, const TfRuntime* runtime) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd >= 0) close(fd);
  return DenseParallel(buffers, runtime);
}
