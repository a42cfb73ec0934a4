/* Crashes: writes through a null pointer. */
#include "kernel_runtime/testdata/dense_kernel_common.h"

int32_t dense_kernel(void** buffers, const TfRuntime* runtime) {
  (void)buffers;
  (void)runtime;
  *(volatile int*)0 = 1;
  return 0;
}
