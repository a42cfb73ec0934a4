/* A correct (naive) dense kernel: rows in parallel through the runtime, plus
 * a workspace round trip so the test exercises every ABI callback. */
#include <string.h>

#include "kernel_runtime/testdata/dense_kernel_common.h"

int32_t dense_kernel(void** buffers, const TfRuntime* runtime) {
  void* scratch = runtime->alloc_workspace(runtime->context, 4096);
  if (scratch == NULL) return 1;
  memset(scratch, 0, 4096);
  runtime->free_workspace(runtime->context, scratch);
  return DenseParallel(buffers, runtime);
}
