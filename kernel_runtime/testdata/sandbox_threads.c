/* Allowed: a kernel that starts its own thread (pthread_create: clone3,
 * refused with ENOSYS, then clone with CLONE_THREAD). Correct. */
#include <pthread.h>

#include "kernel_runtime/testdata/dense_kernel_common.h"

static void* FirstHalf(void* closure) {
  for (int64_t m = 0; m < TEST_DENSE_M / 2; ++m) DenseRow(m, closure);
  return NULL;
}

int32_t dense_kernel(void** buffers, const TfRuntime* runtime) {
  (void)runtime;
  DenseArgs args = {(const float*)buffers[0], (const float*)buffers[1], (float*)buffers[2]};
  pthread_t thread;
  if (pthread_create(&thread, NULL, FirstHalf, &args) != 0) return 11;
  for (int64_t m = TEST_DENSE_M / 2; m < TEST_DENSE_M; ++m) DenseRow(m, &args);
  pthread_join(thread, NULL);
  return 0;
}
