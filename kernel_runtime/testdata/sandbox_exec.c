/* Sandbox attack: replaces the runner with a shell. */
#include <unistd.h>

#include "kernel_runtime/testdata/dense_kernel_common.h"

int32_t dense_kernel(void** buffers, const TfRuntime* runtime) {
  char* const argv[] = {"sh", "-c", "exit 0", NULL};
  char* const envp[] = {NULL};
  execve("/bin/sh", argv, envp);
  return DenseParallel(buffers, runtime);
}
