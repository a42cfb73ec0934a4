/* Sandbox attack: looks for a secret in its environment (the agent's, were
 * it inherited). Returns 98 if it finds it. */
#include <stdlib.h>

#include "kernel_runtime/testdata/dense_kernel_common.h"

int32_t dense_kernel(void** buffers, const TfRuntime* runtime) {
  if (getenv("TUNEFLEET_SANDBOX_TEST_SECRET") != NULL) return 98;
  return DenseParallel(buffers, runtime);
}
