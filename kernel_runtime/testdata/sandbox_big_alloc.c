/* Sandbox attack: allocates 3 GiB. Returns 12 (ENOMEM) when refused, so the
 * trial fails with "kernel returned 12"; correct otherwise. */
#include <stdlib.h>

#include "kernel_runtime/testdata/dense_kernel_common.h"

int32_t dense_kernel(void** buffers, const TfRuntime* runtime) {
  void* big = malloc((size_t)3 << 30);
  if (big == NULL) return 12;
  free(big);
  return DenseParallel(buffers, runtime);
}
