// A fake CUDA driver for tests that need no GPU: a CudaApi of plain
// functions over host memory, so CudaDriver, CudaEventClock and
// GpuKernelRunner run their real code paths on any machine.
//
//   FakeCuda fake;                                   // one at a time
//   fake.AddKernel("dense_kernel", {.body = ..., .duration_ms = 0.25});
//   auto driver = CudaDriver::FromApi(fake.api(), "fake");
//
// What it models:
//   - one device (or none: set_device_count(0)), with H100-like attributes;
//   - device memory: cuMemAlloc returns host memory, so a kernel body reads
//     and writes tensors through the CUdeviceptr values it is given;
//   - modules: cuModuleLoadDataEx fails with CUDA_ERROR_INVALID_PTX and a
//     ptxas-like error log when the PTX contains "SYNTAX ERROR"; functions
//     are the `.entry` names of the PTX that have a registered FakeKernel;
//   - launches run the body at once and advance a GPU timeline by the
//     kernel's duration_ms; events record the timeline. A body that returns
//     an error that loses the context (IsContextLost) makes it sticky, as a
//     real driver does: the launch itself succeeds, and every later
//     synchronising call and launch fails with it;
//   - counters (launches, live allocations, modules, contexts) for leak and
//     call-count checks.
// Not thread-safe; the functions reach the instance through a global, so
// only one FakeCuda may exist at a time.
#ifndef TUNEFLEET_KERNEL_RUNTIME_FAKE_CUDA_DRIVER_H_
#define TUNEFLEET_KERNEL_RUNTIME_FAKE_CUDA_DRIVER_H_

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "kernel_runtime/cuda_driver.h"

namespace tunefleet {
namespace testing {

struct FakeKernel {
  // Runs one launch: `params` are the kernel's parameters (each points to a
  // CUdeviceptr). Returns CUDA_SUCCESS or the error the launch causes.
  std::function<CUresult(const std::array<unsigned, 3>& grid, const std::array<unsigned, 3>& block,
                         void** params)>
      body;
  double duration_ms = 0.1;          // GPU time per launch
  int max_threads_per_block = 1024;  // after "register allocation"
  int num_registers = 32;
};

class FakeCuda {
 public:
  FakeCuda();
  ~FakeCuda();
  FakeCuda(const FakeCuda&) = delete;
  FakeCuda& operator=(const FakeCuda&) = delete;

  // Entry points over this instance.
  CudaApi api() const;

  void set_device_count(int count) { device_count_ = count; }
  void set_init_result(CUresult result) { init_result_ = result; }
  void set_attribute(int attribute, int value) { attributes_[attribute] = value; }
  void AddKernel(const std::string& entry, FakeKernel kernel) { kernels_[entry] = kernel; }

  int launches() const { return launches_; }
  int live_allocations() const { return static_cast<int>(allocations_.size()); }
  int live_modules() const { return live_modules_; }
  int retained_contexts() const { return retained_contexts_; }
  // The sticky error, or CUDA_SUCCESS.
  CUresult sticky_error() const { return sticky_error_; }

  // ---- The entry points' implementation (public for the C trampolines).
  CUresult Init();
  CUresult DeviceGetCount(int* count);
  CUresult DeviceGet(CUdevice* device, int ordinal);
  CUresult DeviceGetName(char* name, int length, CUdevice device);
  CUresult DeviceGetAttribute(int* value, int attribute, CUdevice device);
  CUresult PrimaryCtxRetain(CUcontext* context, CUdevice device);
  CUresult PrimaryCtxRelease(CUdevice device);
  CUresult CtxSetCurrent(CUcontext context);
  CUresult CtxSynchronize();
  CUresult ModuleLoadDataEx(CUmodule* module, const void* image, unsigned num_options, int* options,
                            void** values);
  CUresult ModuleUnload(CUmodule module);
  CUresult ModuleGetFunction(CUfunction* function, CUmodule module, const char* name);
  CUresult FuncGetAttribute(int* value, int attribute, CUfunction function);
  CUresult LaunchKernel(CUfunction function, const std::array<unsigned, 3>& grid,
                        const std::array<unsigned, 3>& block, unsigned shared_bytes, void** params);
  CUresult MemAlloc(CUdeviceptr* pointer, size_t bytes);
  CUresult MemFree(CUdeviceptr pointer);
  CUresult MemcpyHtoD(CUdeviceptr destination, const void* source, size_t bytes);
  CUresult MemcpyDtoH(void* destination, CUdeviceptr source, size_t bytes);
  CUresult EventCreate(CUevent* event);
  CUresult EventRecord(CUevent event);
  CUresult EventSynchronize(CUevent event);
  CUresult EventElapsedTime(float* milliseconds, CUevent start, CUevent end);
  CUresult EventDestroy(CUevent event);

 private:
  int device_count_ = 1;
  CUresult init_result_ = kCudaSuccess;
  std::map<int, int> attributes_;
  std::map<std::string, FakeKernel> kernels_;
  std::map<CUdeviceptr, std::vector<unsigned char>> allocations_;
  std::map<int, std::string> modules_;    // handle -> PTX
  std::map<int, std::string> functions_;  // handle -> entry
  std::map<int, double> events_;          // handle -> recorded GPU time (ms), NaN if never recorded
  int next_handle_ = 1;
  int live_modules_ = 0;
  int retained_contexts_ = 0;
  int launches_ = 0;
  double gpu_time_ms_ = 0;
  CUresult sticky_error_ = kCudaSuccess;
};

// The dense kernels the fake runs for kernel_runtime/testdata's shape (dense
// 48x40x64, layout NK: C[m, n] = sum_k A[m, k] * B[n, k]), one thread per
// element. `skip_index` >= 0 leaves that flat output index unwritten.
FakeKernel FakeDenseKernel(int64_t m, int64_t n, int64_t k, int64_t skip_index = -1);
// A kernel whose launch faults with `error` (e.g. CUDA_ERROR_ILLEGAL_ADDRESS).
FakeKernel FakeFaultingKernel(CUresult error);

// The warm-up kernel (GpuKernelRunner::WarmUp, entry kGpuWarmUpEntry):
// stores 42 to the u32 its one parameter points to.
FakeKernel FakeWarmUpKernel();

// A minimal PTX text whose entry `entry` takes `params` .u64 parameters
// (what the fake looks for; not meant for a real driver).
std::string FakePtx(const std::string& entry, int params);

}  // namespace testing
}  // namespace tunefleet

#endif  // TUNEFLEET_KERNEL_RUNTIME_FAKE_CUDA_DRIVER_H_
