/* Reports failure the ABI way (as if a workspace allocation had failed). */
#include "kernel_runtime/testdata/dense_kernel_common.h"

int32_t dense_kernel(void** buffers, const TfRuntime* runtime) {
  (void)buffers;
  (void)runtime;
  return 7;
}
