/* Sandbox attack: creates a file in /tmp through openat (fopen). */
#include <stdio.h>

#include "kernel_runtime/testdata/dense_kernel_common.h"

int32_t dense_kernel(void** buffers, const TfRuntime* runtime) {
  FILE* file = fopen("/tmp/tunefleet_sandbox_escape_tmp", "w");
  if (file != NULL) {
    fputs("escaped\n", file);
    fclose(file);
  }
  return DenseParallel(buffers, runtime);
}
