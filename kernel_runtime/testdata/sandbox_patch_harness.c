/* Sandbox attack: makes a page of the harness's code (here libc's, where
 * the runner's own functions live beside it) writable and executable, as a
 * kernel would to patch the time evaluator and forge later trials' costs. */
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "kernel_runtime/testdata/dense_kernel_common.h"

int32_t dense_kernel(void** buffers, const TfRuntime* runtime) {
  const uintptr_t code = (uintptr_t)&memcpy;
  void* page = (void*)(code & ~(uintptr_t)4095);
  if (mprotect(page, 4096, PROT_READ | PROT_WRITE | PROT_EXEC) == 0) return 97;
  return DenseParallel(buffers, runtime);
}
