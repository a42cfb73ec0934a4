/* Never returns. The volatile store keeps the compiler from treating the
 * loop as side-effect free. */
#include "kernel_runtime/testdata/dense_kernel_common.h"

int32_t dense_kernel(void** buffers, const TfRuntime* runtime) {
  (void)buffers;
  (void)runtime;
  volatile int64_t spins = 0;
  for (;;) spins = spins + 1;
  return 0;
}
