/* Sandbox attack: reads a file of the agent's user (as it would a builder
 * key, a token or the store). Landlock refuses the open; the kernel returns
 * 99 if it could read a byte. The test creates the file. */
#include <fcntl.h>
#include <unistd.h>

#include "kernel_runtime/testdata/dense_kernel_common.h"

int32_t dense_kernel(void** buffers, const TfRuntime* runtime) {
  const int fd = open("/tmp/tunefleet_sandbox_secret", O_RDONLY);
  if (fd >= 0) {
    char byte;
    const ssize_t got = read(fd, &byte, 1);
    close(fd);
    if (got == 1) return 99;
  }
  return DenseParallel(buffers, runtime);
}
