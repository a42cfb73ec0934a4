/* Shapes and a shared naive implementation for the test kernels: dense with
 * layout NK, C[m, n] = sum_k A[m, k] * B[n, k], at the fixed shape below (a
 * real artifact is compiled for one shape too). Non-square so that a kernel
 * mixing up dimensions or layouts fails the check. */
#ifndef TUNEFLEET_DEVICE_AGENT_TESTDATA_DENSE_KERNEL_COMMON_H_
#define TUNEFLEET_DEVICE_AGENT_TESTDATA_DENSE_KERNEL_COMMON_H_

#include <stdint.h>

#include "common/kernel_abi.h"

#define TEST_DENSE_M 48
#define TEST_DENSE_N 40
#define TEST_DENSE_K 64

typedef struct DenseArgs {
  const float* a;
  const float* b;
  float* c;
} DenseArgs;

/* One output row per parallel_for index. */
static inline void DenseRow(int64_t m, void* closure) {
  const DenseArgs* args = (const DenseArgs*)closure;
  for (int64_t n = 0; n < TEST_DENSE_N; ++n) {
    float sum = 0.0f;
    for (int64_t k = 0; k < TEST_DENSE_K; ++k) {
      sum += args->a[m * TEST_DENSE_K + k] * args->b[n * TEST_DENSE_K + k];
    }
    args->c[m * TEST_DENSE_N + n] = sum;
  }
}

static inline int32_t DenseParallel(void** buffers, const TfRuntime* runtime) {
  DenseArgs args = {(const float*)buffers[0], (const float*)buffers[1], (float*)buffers[2]};
  runtime->parallel_for(runtime->context, TEST_DENSE_M, DenseRow, &args);
  return 0;
}

#endif /* TUNEFLEET_DEVICE_AGENT_TESTDATA_DENSE_KERNEL_COMMON_H_ */
