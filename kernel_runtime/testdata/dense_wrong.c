/* Computes dense correctly, then corrupts one output element (row 2,
 * column 3, flat index 2 * N + 3 = 83): the check must name that index. */
#include "kernel_runtime/testdata/dense_kernel_common.h"

int32_t dense_kernel(void** buffers, const TfRuntime* runtime) {
  int32_t rc = DenseParallel(buffers, runtime);
  ((float*)buffers[2])[2 * TEST_DENSE_N + 3] += 0.5f;
  return rc;
}
