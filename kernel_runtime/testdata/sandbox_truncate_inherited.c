/* Sandbox attack: truncates an inherited descriptor (stderr: the agent's
 * log when it writes to a file; fd 5: the status page it reads). */
#include <unistd.h>

#include "kernel_runtime/testdata/dense_kernel_common.h"

int32_t dense_kernel(void** buffers, const TfRuntime* runtime) {
  int failed = ftruncate(5, 0);
  failed |= ftruncate(STDERR_FILENO, 0);
  (void)failed;
  return DenseParallel(buffers, runtime);
}
