#include "kernel_runtime/fake_cuda_driver.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/check.h"

namespace tunefleet {
namespace testing {
namespace {

FakeCuda* g_fake = nullptr;

FakeCuda& Fake() {
  TF_CHECK(g_fake != nullptr);  // a test bug: no FakeCuda alive
  return *g_fake;
}

template <typename Handle>
Handle ToHandle(int id) {
  return reinterpret_cast<Handle>(static_cast<intptr_t>(id));
}

template <typename Handle>
int FromHandle(Handle handle) {
  return static_cast<int>(reinterpret_cast<intptr_t>(handle));
}

const char* FakeErrorName(CUresult error) {
  switch (error) {
    case kCudaErrorInvalidValue:
      return "CUDA_ERROR_INVALID_VALUE";
    case kCudaErrorOutOfMemory:
      return "CUDA_ERROR_OUT_OF_MEMORY";
    case kCudaErrorNoDevice:
      return "CUDA_ERROR_NO_DEVICE";
    case kCudaErrorInvalidPtx:
      return "CUDA_ERROR_INVALID_PTX";
    case kCudaErrorNotFound:
      return "CUDA_ERROR_NOT_FOUND";
    case kCudaErrorIllegalAddress:
      return "CUDA_ERROR_ILLEGAL_ADDRESS";
    case kCudaErrorLaunchOutOfResources:
      return "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES";
    case kCudaErrorLaunchFailed:
      return "CUDA_ERROR_LAUNCH_FAILED";
  }
  return nullptr;
}

// The C entry points: each forwards to the live FakeCuda.
CUresult Init(unsigned) { return Fake().Init(); }
CUresult DriverGetVersion(int* version) {
  *version = 12040;
  return kCudaSuccess;
}
CUresult DeviceGetCount(int* count) { return Fake().DeviceGetCount(count); }
CUresult DeviceGet(CUdevice* device, int ordinal) { return Fake().DeviceGet(device, ordinal); }
CUresult DeviceGetName(char* name, int length, CUdevice device) {
  return Fake().DeviceGetName(name, length, device);
}
CUresult DeviceGetAttribute(int* value, int attribute, CUdevice device) {
  return Fake().DeviceGetAttribute(value, attribute, device);
}
CUresult PrimaryCtxRetain(CUcontext* context, CUdevice device) {
  return Fake().PrimaryCtxRetain(context, device);
}
CUresult PrimaryCtxRelease(CUdevice device) { return Fake().PrimaryCtxRelease(device); }
CUresult CtxSetCurrent(CUcontext context) { return Fake().CtxSetCurrent(context); }
CUresult CtxSynchronize() { return Fake().CtxSynchronize(); }
CUresult ModuleLoadDataEx(CUmodule* module, const void* image, unsigned num_options, int* options,
                          void** values) {
  return Fake().ModuleLoadDataEx(module, image, num_options, options, values);
}
CUresult ModuleUnload(CUmodule module) { return Fake().ModuleUnload(module); }
CUresult ModuleGetFunction(CUfunction* function, CUmodule module, const char* name) {
  return Fake().ModuleGetFunction(function, module, name);
}
CUresult FuncGetAttribute(int* value, int attribute, CUfunction function) {
  return Fake().FuncGetAttribute(value, attribute, function);
}
CUresult LaunchKernel(CUfunction function, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                      unsigned by, unsigned bz, unsigned shared_bytes, CUstream, void** params,
                      void**) {
  return Fake().LaunchKernel(function, {gx, gy, gz}, {bx, by, bz}, shared_bytes, params);
}
CUresult MemAlloc(CUdeviceptr* pointer, size_t bytes) { return Fake().MemAlloc(pointer, bytes); }
CUresult MemFree(CUdeviceptr pointer) { return Fake().MemFree(pointer); }
CUresult MemcpyHtoD(CUdeviceptr destination, const void* source, size_t bytes) {
  return Fake().MemcpyHtoD(destination, source, bytes);
}
CUresult MemcpyDtoH(void* destination, CUdeviceptr source, size_t bytes) {
  return Fake().MemcpyDtoH(destination, source, bytes);
}
CUresult EventCreate(CUevent* event, unsigned) { return Fake().EventCreate(event); }
CUresult EventRecord(CUevent event, CUstream) { return Fake().EventRecord(event); }
CUresult EventSynchronize(CUevent event) { return Fake().EventSynchronize(event); }
CUresult EventElapsedTime(float* milliseconds, CUevent start, CUevent end) {
  return Fake().EventElapsedTime(milliseconds, start, end);
}
CUresult EventDestroy(CUevent event) { return Fake().EventDestroy(event); }
CUresult GetErrorName(CUresult error, const char** name) {
  *name = FakeErrorName(error);
  return *name != nullptr ? kCudaSuccess : kCudaErrorInvalidValue;
}
CUresult GetErrorString(CUresult error, const char** text) {
  if (FakeErrorName(error) == nullptr) return kCudaErrorInvalidValue;
  *text = "fake driver's description";
  return kCudaSuccess;
}

}  // namespace

FakeCuda::FakeCuda() {
  TF_CHECK(g_fake == nullptr);  // one at a time
  g_fake = this;
  // An H100 SXM's values.
  attributes_ = {{kCudaAttrMaxThreadsPerBlock, 1024},
                 {kCudaAttrMaxBlockDimX, 1024},
                 {kCudaAttrMaxBlockDimY, 1024},
                 {kCudaAttrMaxBlockDimZ, 64},
                 {kCudaAttrMaxGridDimX, 2147483647},
                 {kCudaAttrMaxGridDimY, 65535},
                 {kCudaAttrMaxGridDimZ, 65535},
                 {kCudaAttrMaxSharedMemoryPerBlock, 49152},
                 {kCudaAttrWarpSize, 32},
                 {kCudaAttrMaxRegistersPerBlock, 65536},
                 {kCudaAttrClockRateKhz, 1980000},
                 {kCudaAttrMultiprocessorCount, 132},
                 {kCudaAttrComputeCapabilityMajor, 9},
                 {kCudaAttrComputeCapabilityMinor, 0},
                 {kCudaAttrMaxSharedMemoryPerBlockOptin, 232448}};
}

FakeCuda::~FakeCuda() { g_fake = nullptr; }

CudaApi FakeCuda::api() const {
  CudaApi api;
  api.cuInit = &testing::Init;
  api.cuDriverGetVersion = &DriverGetVersion;
  api.cuDeviceGetCount = &testing::DeviceGetCount;
  api.cuDeviceGet = &testing::DeviceGet;
  api.cuDeviceGetName = &testing::DeviceGetName;
  api.cuDeviceGetAttribute = &testing::DeviceGetAttribute;
  api.cuDevicePrimaryCtxRetain = &testing::PrimaryCtxRetain;
  api.cuDevicePrimaryCtxRelease = &testing::PrimaryCtxRelease;
  api.cuCtxSetCurrent = &testing::CtxSetCurrent;
  api.cuCtxSynchronize = &testing::CtxSynchronize;
  api.cuModuleLoadDataEx = &testing::ModuleLoadDataEx;
  api.cuModuleUnload = &testing::ModuleUnload;
  api.cuModuleGetFunction = &testing::ModuleGetFunction;
  api.cuFuncGetAttribute = &testing::FuncGetAttribute;
  api.cuLaunchKernel = &testing::LaunchKernel;
  api.cuMemAlloc = &testing::MemAlloc;
  api.cuMemFree = &testing::MemFree;
  api.cuMemcpyHtoD = &testing::MemcpyHtoD;
  api.cuMemcpyDtoH = &testing::MemcpyDtoH;
  api.cuEventCreate = &testing::EventCreate;
  api.cuEventRecord = &testing::EventRecord;
  api.cuEventSynchronize = &testing::EventSynchronize;
  api.cuEventElapsedTime = &testing::EventElapsedTime;
  api.cuEventDestroy = &testing::EventDestroy;
  api.cuGetErrorName = &GetErrorName;
  api.cuGetErrorString = &GetErrorString;
  return api;
}

CUresult FakeCuda::Init() { return init_result_; }

CUresult FakeCuda::DeviceGetCount(int* count) {
  *count = device_count_;
  return kCudaSuccess;
}

CUresult FakeCuda::DeviceGet(CUdevice* device, int ordinal) {
  if (ordinal < 0 || ordinal >= device_count_) return kCudaErrorInvalidDevice;
  *device = ordinal;
  return kCudaSuccess;
}

CUresult FakeCuda::DeviceGetName(char* name, int length, CUdevice device) {
  if (device < 0 || device >= device_count_) return kCudaErrorInvalidDevice;
  std::snprintf(name, length, "Fake H100 %d", device);
  return kCudaSuccess;
}

CUresult FakeCuda::DeviceGetAttribute(int* value, int attribute, CUdevice device) {
  if (device < 0 || device >= device_count_) return kCudaErrorInvalidDevice;
  auto it = attributes_.find(attribute);
  if (it == attributes_.end()) return kCudaErrorInvalidValue;
  *value = it->second;
  return kCudaSuccess;
}

CUresult FakeCuda::PrimaryCtxRetain(CUcontext* context, CUdevice device) {
  if (device < 0 || device >= device_count_) return kCudaErrorInvalidDevice;
  ++retained_contexts_;
  *context = ToHandle<CUcontext>(1000 + device);
  return kCudaSuccess;
}

CUresult FakeCuda::PrimaryCtxRelease(CUdevice) {
  --retained_contexts_;
  return kCudaSuccess;
}

CUresult FakeCuda::CtxSetCurrent(CUcontext) { return kCudaSuccess; }

CUresult FakeCuda::CtxSynchronize() { return sticky_error_; }

CUresult FakeCuda::ModuleLoadDataEx(CUmodule* module, const void* image, unsigned num_options,
                                    int* options, void** values) {
  if (sticky_error_ != kCudaSuccess) return sticky_error_;
  const std::string ptx(static_cast<const char*>(image));
  if (absl::StrContains(ptx, "SYNTAX ERROR")) {
    for (unsigned i = 0; i < num_options; ++i) {
      if (options[i] != kCudaJitErrorLogBuffer) continue;
      size_t size = 0;
      for (unsigned j = 0; j < num_options; ++j) {
        if (options[j] == kCudaJitErrorLogBufferSizeBytes) {
          size = reinterpret_cast<uintptr_t>(values[j]);
        }
      }
      std::snprintf(static_cast<char*>(values[i]), size,
                    "ptxas application ptx input, line 3; error   : syntax error");
    }
    return kCudaErrorInvalidPtx;
  }
  const int id = next_handle_++;
  modules_[id] = ptx;
  ++live_modules_;
  *module = ToHandle<CUmodule>(id);
  return kCudaSuccess;
}

CUresult FakeCuda::ModuleUnload(CUmodule module) {
  if (modules_.erase(FromHandle(module)) == 0) return kCudaErrorInvalidValue;
  --live_modules_;
  return kCudaSuccess;
}

CUresult FakeCuda::ModuleGetFunction(CUfunction* function, CUmodule module, const char* name) {
  auto it = modules_.find(FromHandle(module));
  if (it == modules_.end()) return kCudaErrorInvalidValue;
  if (!absl::StrContains(it->second, absl::StrCat(".entry ", name)) || kernels_.count(name) == 0) {
    return kCudaErrorNotFound;
  }
  const int id = next_handle_++;
  functions_[id] = name;
  *function = ToHandle<CUfunction>(id);
  return kCudaSuccess;
}

CUresult FakeCuda::FuncGetAttribute(int* value, int attribute, CUfunction function) {
  auto it = functions_.find(FromHandle(function));
  if (it == functions_.end()) return kCudaErrorInvalidValue;
  const FakeKernel& kernel = kernels_.at(it->second);
  switch (attribute) {
    case kCudaFuncAttrMaxThreadsPerBlock:
      *value = kernel.max_threads_per_block;
      break;
    case kCudaFuncAttrNumRegs:
      *value = kernel.num_registers;
      break;
    default:
      *value = 0;
      break;
  }
  return kCudaSuccess;
}

CUresult FakeCuda::LaunchKernel(CUfunction function, const std::array<unsigned, 3>& grid,
                                const std::array<unsigned, 3>& block, unsigned, void** params) {
  if (sticky_error_ != kCudaSuccess) return sticky_error_;
  auto it = functions_.find(FromHandle(function));
  if (it == functions_.end()) return kCudaErrorInvalidValue;
  const FakeKernel& kernel = kernels_.at(it->second);
  if (static_cast<int64_t>(block[0]) * block[1] * block[2] > kernel.max_threads_per_block) {
    return kCudaErrorLaunchOutOfResources;
  }
  ++launches_;
  gpu_time_ms_ += kernel.duration_ms;
  const CUresult result = kernel.body ? kernel.body(grid, block, params) : kCudaSuccess;
  // Execution errors are asynchronous: the launch "succeeds" and the error
  // sticks to the context.
  if (IsContextLost(result)) {
    sticky_error_ = result;
    return kCudaSuccess;
  }
  return result;
}

CUresult FakeCuda::MemAlloc(CUdeviceptr* pointer, size_t bytes) {
  if (sticky_error_ != kCudaSuccess) return sticky_error_;
  if (bytes == 0) return kCudaErrorInvalidValue;
  std::vector<unsigned char> memory(bytes, 0xAB);
  const CUdeviceptr address = reinterpret_cast<CUdeviceptr>(memory.data());
  allocations_[address] = std::move(memory);  // the vector's buffer moves with it
  *pointer = address;
  return kCudaSuccess;
}

CUresult FakeCuda::MemFree(CUdeviceptr pointer) {
  if (allocations_.erase(pointer) == 0) return kCudaErrorInvalidValue;
  return kCudaSuccess;
}

CUresult FakeCuda::MemcpyHtoD(CUdeviceptr destination, const void* source, size_t bytes) {
  if (sticky_error_ != kCudaSuccess) return sticky_error_;
  std::memcpy(reinterpret_cast<void*>(destination), source, bytes);
  return kCudaSuccess;
}

CUresult FakeCuda::MemcpyDtoH(void* destination, CUdeviceptr source, size_t bytes) {
  if (sticky_error_ != kCudaSuccess) return sticky_error_;
  std::memcpy(destination, reinterpret_cast<const void*>(source), bytes);
  return kCudaSuccess;
}

CUresult FakeCuda::EventCreate(CUevent* event) {
  const int id = next_handle_++;
  events_[id] = std::numeric_limits<double>::quiet_NaN();
  *event = ToHandle<CUevent>(id);
  return kCudaSuccess;
}

CUresult FakeCuda::EventRecord(CUevent event) {
  if (sticky_error_ != kCudaSuccess) return sticky_error_;
  auto it = events_.find(FromHandle(event));
  if (it == events_.end()) return kCudaErrorInvalidValue;
  it->second = gpu_time_ms_;
  return kCudaSuccess;
}

CUresult FakeCuda::EventSynchronize(CUevent event) {
  if (sticky_error_ != kCudaSuccess) return sticky_error_;
  return events_.count(FromHandle(event)) > 0 ? kCudaSuccess : kCudaErrorInvalidValue;
}

CUresult FakeCuda::EventElapsedTime(float* milliseconds, CUevent start, CUevent end) {
  auto from = events_.find(FromHandle(start));
  auto to = events_.find(FromHandle(end));
  if (from == events_.end() || to == events_.end()) return kCudaErrorInvalidValue;
  if (std::isnan(from->second) || std::isnan(to->second)) return kCudaErrorInvalidValue;
  *milliseconds = static_cast<float>(to->second - from->second);
  return kCudaSuccess;
}

CUresult FakeCuda::EventDestroy(CUevent event) {
  return events_.erase(FromHandle(event)) > 0 ? kCudaSuccess : kCudaErrorInvalidValue;
}

FakeKernel FakeDenseKernel(int64_t m, int64_t n, int64_t k, int64_t skip_index) {
  FakeKernel kernel;
  kernel.body = [m, n, k, skip_index](const std::array<unsigned, 3>&,
                                      const std::array<unsigned, 3>&, void** params) {
    const float* a = reinterpret_cast<const float*>(*static_cast<CUdeviceptr*>(params[0]));
    const float* b = reinterpret_cast<const float*>(*static_cast<CUdeviceptr*>(params[1]));
    float* c = reinterpret_cast<float*>(*static_cast<CUdeviceptr*>(params[2]));
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        if (i * n + j == skip_index) continue;
        float sum = 0;
        for (int64_t kk = 0; kk < k; ++kk) sum += a[i * k + kk] * b[j * k + kk];
        c[i * n + j] = sum;
      }
    }
    return kCudaSuccess;
  };
  return kernel;
}

FakeKernel FakeFaultingKernel(CUresult error) {
  FakeKernel kernel;
  kernel.body = [error](const std::array<unsigned, 3>&, const std::array<unsigned, 3>&, void**) {
    return error;
  };
  return kernel;
}

FakeKernel FakeWarmUpKernel() {
  FakeKernel kernel;
  kernel.body = [](const std::array<unsigned, 3>&, const std::array<unsigned, 3>&, void** params) {
    const CUdeviceptr target = *static_cast<CUdeviceptr*>(params[0]);
    const uint32_t value = 42;
    std::memcpy(reinterpret_cast<void*>(static_cast<uintptr_t>(target)), &value, sizeof(value));
    return kCudaSuccess;
  };
  return kernel;
}

std::string FakePtx(const std::string& entry, int params) {
  std::string ptx = absl::StrCat(".version 7.0\n.target sm_75\n.address_size 64\n\n",
                                 ".visible .entry ", entry, "(\n");
  for (int i = 0; i < params; ++i) {
    absl::StrAppend(&ptx, "\t.param .u64 ", entry, "_param_", i, i + 1 < params ? ",\n" : "\n");
  }
  absl::StrAppend(&ptx, ")\n{\n\tret;\n}\n");
  return ptx;
}

}  // namespace testing
}  // namespace tunefleet
