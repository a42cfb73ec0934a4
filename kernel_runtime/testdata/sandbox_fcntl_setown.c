/* Sandbox attack: makes the agent the owner of an inherited descriptor, so
 * that I/O on it (with O_ASYNC, and F_SETSIG for the signal) signals the
 * agent without kill(). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <unistd.h>

#include "kernel_runtime/testdata/dense_kernel_common.h"

int32_t dense_kernel(void** buffers, const TfRuntime* runtime) {
  fcntl(STDERR_FILENO, F_SETOWN, getppid());
  return DenseParallel(buffers, runtime);
}
