/* Sandbox attack: creates and writes a file outside any scratch directory:
 * $TEST_TMPDIR/tunefleet_sandbox_escape (the test's own temporary
 * directory), or ./tunefleet_sandbox_escape without it. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "kernel_runtime/testdata/dense_kernel_common.h"

int32_t dense_kernel(void** buffers, const TfRuntime* runtime) {
  const char* dir = getenv("TEST_TMPDIR");
  char path[4096];
  snprintf(path, sizeof(path), "%s/tunefleet_sandbox_escape", dir != NULL ? dir : ".");
  const int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) {
    if (write(fd, "escaped\n", 8) < 0) return 5;
    close(fd);
  }
  return DenseParallel(buffers, runtime);
}
