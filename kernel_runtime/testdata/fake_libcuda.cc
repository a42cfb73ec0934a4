// A stand-in libcuda.so.1 for process-level tests without a GPU: the CUDA
// driver's exported symbols over testing::FakeCuda (fake_cuda_driver.h), so
// a real tunefleet_runner child started with --cuda_driver=<this library>
// goes through its real GPU path. Kernels, by entry name:
//   dense_kernel   correct dense 48x40x64, layout NK (test_kernels.h)
//   fault_kernel   faults with CUDA_ERROR_ILLEGAL_ADDRESS, losing the context
//   tunefleet_warm_up  the runner child's warm-up before its sandbox
//                  (kGpuWarmUpEntry, gpu_kernel_runner.h)
#include "kernel_runtime/cuda_driver.h"
#include "kernel_runtime/fake_cuda_driver.h"

namespace {

using ::tunefleet::CudaApi;
using ::tunefleet::testing::FakeCuda;

const CudaApi& Api() {
  static FakeCuda* fake = [] {
    auto* created = new FakeCuda();  // lives as long as the process
    created->AddKernel("dense_kernel", tunefleet::testing::FakeDenseKernel(48, 40, 64));
    created->AddKernel("fault_kernel",
                       tunefleet::testing::FakeFaultingKernel(tunefleet::kCudaErrorIllegalAddress));
    created->AddKernel("tunefleet_warm_up", tunefleet::testing::FakeWarmUpKernel());
    return created;
  }();
  static const CudaApi api = fake->api();
  return api;
}

}  // namespace

using tunefleet::CUcontext;
using tunefleet::CUdevice;
using tunefleet::CUdeviceptr;
using tunefleet::CUevent;
using tunefleet::CUfunction;
using tunefleet::CUmodule;
using tunefleet::CUresult;
using tunefleet::CUstream;

extern "C" {
__attribute__((visibility("default"))) CUresult cuInit(unsigned flags) {
  return Api().cuInit(flags);
}
__attribute__((visibility("default"))) CUresult cuDriverGetVersion(int* v) {
  return Api().cuDriverGetVersion(v);
}
__attribute__((visibility("default"))) CUresult cuDeviceGetCount(int* c) {
  return Api().cuDeviceGetCount(c);
}
__attribute__((visibility("default"))) CUresult cuDeviceGet(CUdevice* d, int o) {
  return Api().cuDeviceGet(d, o);
}
__attribute__((visibility("default"))) CUresult cuDeviceGetName(char* n, int l, CUdevice d) {
  return Api().cuDeviceGetName(n, l, d);
}
__attribute__((visibility("default"))) CUresult cuDeviceGetAttribute(int* v, int a, CUdevice d) {
  return Api().cuDeviceGetAttribute(v, a, d);
}
__attribute__((visibility("default"))) CUresult cuDevicePrimaryCtxRetain(CUcontext* c, CUdevice d) {
  return Api().cuDevicePrimaryCtxRetain(c, d);
}
__attribute__((visibility("default"))) CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d) {
  return Api().cuDevicePrimaryCtxRelease(d);
}
__attribute__((visibility("default"))) CUresult cuCtxSetCurrent(CUcontext c) {
  return Api().cuCtxSetCurrent(c);
}
__attribute__((visibility("default"))) CUresult cuCtxSynchronize() {
  return Api().cuCtxSynchronize();
}
__attribute__((visibility("default"))) CUresult cuModuleLoadDataEx(CUmodule* m, const void* i,
                                                                   unsigned n, int* o, void** v) {
  return Api().cuModuleLoadDataEx(m, i, n, o, v);
}
__attribute__((visibility("default"))) CUresult cuModuleUnload(CUmodule m) {
  return Api().cuModuleUnload(m);
}
__attribute__((visibility("default"))) CUresult cuModuleGetFunction(CUfunction* f, CUmodule m,
                                                                    const char* n) {
  return Api().cuModuleGetFunction(f, m, n);
}
__attribute__((visibility("default"))) CUresult cuFuncGetAttribute(int* v, int a, CUfunction f) {
  return Api().cuFuncGetAttribute(v, a, f);
}
__attribute__((visibility("default"))) CUresult cuLaunchKernel(CUfunction f, unsigned gx,
                                                               unsigned gy, unsigned gz,
                                                               unsigned bx, unsigned by,
                                                               unsigned bz, unsigned s, CUstream st,
                                                               void** p, void** e) {
  return Api().cuLaunchKernel(f, gx, gy, gz, bx, by, bz, s, st, p, e);
}
__attribute__((visibility("default"))) CUresult cuMemAlloc_v2(CUdeviceptr* p, size_t b) {
  return Api().cuMemAlloc(p, b);
}
__attribute__((visibility("default"))) CUresult cuMemFree_v2(CUdeviceptr p) {
  return Api().cuMemFree(p);
}
__attribute__((visibility("default"))) CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void* s,
                                                                size_t b) {
  return Api().cuMemcpyHtoD(d, s, b);
}
__attribute__((visibility("default"))) CUresult cuMemcpyDtoH_v2(void* d, CUdeviceptr s, size_t b) {
  return Api().cuMemcpyDtoH(d, s, b);
}
__attribute__((visibility("default"))) CUresult cuEventCreate(CUevent* e, unsigned f) {
  return Api().cuEventCreate(e, f);
}
__attribute__((visibility("default"))) CUresult cuEventRecord(CUevent e, CUstream s) {
  return Api().cuEventRecord(e, s);
}
__attribute__((visibility("default"))) CUresult cuEventSynchronize(CUevent e) {
  return Api().cuEventSynchronize(e);
}
__attribute__((visibility("default"))) CUresult cuEventElapsedTime(float* ms, CUevent a,
                                                                   CUevent b) {
  return Api().cuEventElapsedTime(ms, a, b);
}
__attribute__((visibility("default"))) CUresult cuEventDestroy_v2(CUevent e) {
  return Api().cuEventDestroy(e);
}
__attribute__((visibility("default"))) CUresult cuGetErrorName(CUresult r, const char** n) {
  return Api().cuGetErrorName(r, n);
}
__attribute__((visibility("default"))) CUresult cuGetErrorString(CUresult r, const char** s) {
  return Api().cuGetErrorString(r, s);
}
}  // extern "C"
