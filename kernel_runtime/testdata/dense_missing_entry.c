/* A valid object that exports the kernel under another name: loading works,
 * looking up "dense_kernel" must fail. */
#include "kernel_runtime/testdata/dense_kernel_common.h"

int32_t some_other_kernel(void** buffers, const TfRuntime* runtime) {
  return DenseParallel(buffers, runtime);
}
