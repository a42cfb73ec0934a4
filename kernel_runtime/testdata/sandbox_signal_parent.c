/* Sandbox attack: signals another process (the agent; signal 0 only tests
 * that it could). */
#include <signal.h>
#include <unistd.h>

#include "kernel_runtime/testdata/dense_kernel_common.h"

int32_t dense_kernel(void** buffers, const TfRuntime* runtime) {
  kill(getppid(), 0);
  return DenseParallel(buffers, runtime);
}
