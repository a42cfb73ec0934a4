/* Sandbox attack: moves another process (the agent) onto one CPU, which
 * would skew the timings of everything it measures. */
#define _GNU_SOURCE
#include <sched.h>
#include <unistd.h>

#include "kernel_runtime/testdata/dense_kernel_common.h"

int32_t dense_kernel(void** buffers, const TfRuntime* runtime) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(0, &set);
  sched_setaffinity(getppid(), sizeof(set), &set);
  return DenseParallel(buffers, runtime);
}
