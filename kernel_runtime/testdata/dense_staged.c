/* A correct staged dense kernel (common/kernel_abi.h): prepare packs B into a
 * staged [K][N] copy, the timed entry multiplies into a staged C, and finish
 * copies that staged C into the output. Correct only when the loader runs
 * all three stages, in order, with the staged buffers after the tensors. */
#include <string.h>

#include "kernel_runtime/testdata/dense_kernel_common.h"

const int64_t dense_kernel_staged_elements[] = {TEST_DENSE_K * TEST_DENSE_N,
                                                TEST_DENSE_M * TEST_DENSE_N, -1};

int32_t dense_kernel_prepare(void** args, const TfRuntime* runtime) {
  (void)runtime;
  const float* b = (const float*)args[1];
  float* b_kn = (float*)args[3];
  for (int64_t n = 0; n < TEST_DENSE_N; ++n) {
    for (int64_t k = 0; k < TEST_DENSE_K; ++k) b_kn[k * TEST_DENSE_N + n] = b[n * TEST_DENSE_K + k];
  }
  return 0;
}

int32_t dense_kernel(void** args, const TfRuntime* runtime) {
  (void)runtime;
  const float* a = (const float*)args[0];
  const float* b_kn = (const float*)args[3];
  float* c_staged = (float*)args[4];
  for (int64_t m = 0; m < TEST_DENSE_M; ++m) {
    for (int64_t n = 0; n < TEST_DENSE_N; ++n) {
      float sum = 0.0f;
      for (int64_t k = 0; k < TEST_DENSE_K; ++k) sum += a[m * TEST_DENSE_K + k] * b_kn[k * TEST_DENSE_N + n];
      c_staged[m * TEST_DENSE_N + n] = sum;
    }
  }
  return 0;
}

int32_t dense_kernel_finish(void** args, const TfRuntime* runtime) {
  (void)runtime;
  memcpy(args[2], args[4], sizeof(float) * TEST_DENSE_M * TEST_DENSE_N);
  return 0;
}
