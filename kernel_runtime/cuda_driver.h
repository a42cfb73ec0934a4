// The CUDA driver API, opened at run time: the agent (and bench tools) load
// PTX, move tensors and time kernels on an NVIDIA GPU through libcuda.so.1
// without linking against it or including <cuda.h>, so the same agent binary
// builds and runs on machines with no GPU and cross-compiles for boards with
// no CUDA at all.
//
//   TF_ASSIGN_OR_RETURN(std::unique_ptr<CudaDriver> driver, CudaDriver::Open());
//   TF_ASSIGN_OR_RETURN(CUdevice device, driver->Device(/*ordinal=*/0));
//   TF_ASSIGN_OR_RETURN(GpuDeviceProperties props, driver->Properties(device));
//   TF_ASSIGN_OR_RETURN(CudaContext context, CudaContext::Retain(*driver, device));
//   TF_ASSIGN_OR_RETURN(CudaModule module, CudaModule::Load(*driver, ptx));
//   TF_ASSIGN_OR_RETURN(CUfunction function, module.Function("dense_kernel"));
//
// Every failing CUresult becomes an absl::Status naming the call and the
// driver's error name ("cuMemAlloc_v2 failed: CUDA_ERROR_OUT_OF_MEMORY (out of
// memory)"), with the raw code attached (CudaResultOf) so callers can tell a
// fault that poisons the context (IsContextLost) from one that does not.
//
// The few types, enums and attribute numbers used are declared below with the
// values of cuda.h (CUDA 13; they are ABI and have not changed since CUDA 4).
// Handles (CudaContext, CudaModule, DeviceBuffer, CudaEvent) are RAII and
// move-only; each keeps a pointer to its CudaDriver, which must outlive it.
// A CudaDriver is never dlclose()d: libcuda starts threads of its own.
//
// Thread-safety: the driver API is thread-safe; a CUDA context is current
// per thread, so make it current (CudaContext::MakeCurrent) on the thread
// that launches.
#ifndef TUNEFLEET_KERNEL_RUNTIME_CUDA_DRIVER_H_
#define TUNEFLEET_KERNEL_RUNTIME_CUDA_DRIVER_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tunefleet {

// ---- What cuda.h would declare (same names, values and layouts).
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;  // NOLINT: cuda.h's exact type (64-bit builds)
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUevent = struct CUevent_st*;
using CUstream = struct CUstream_st*;

inline constexpr CUresult kCudaSuccess = 0;

// CUresult values the agent treats specially.
enum CudaError : CUresult {
  kCudaErrorInvalidValue = 1,
  kCudaErrorOutOfMemory = 2,
  kCudaErrorNotInitialized = 3,
  kCudaErrorStubLibrary = 34,
  kCudaErrorInsufficientDriver = 35,
  kCudaErrorNoDevice = 100,
  kCudaErrorInvalidDevice = 101,
  kCudaErrorInvalidImage = 200,
  kCudaErrorNoBinaryForGpu = 209,
  kCudaErrorEccUncorrectable = 214,
  kCudaErrorInvalidPtx = 218,
  kCudaErrorJitCompilerNotFound = 221,
  kCudaErrorUnsupportedPtxVersion = 222,
  kCudaErrorContained = 226,
  kCudaErrorNotFound = 500,
  kCudaErrorIllegalAddress = 700,
  kCudaErrorLaunchOutOfResources = 701,
  kCudaErrorLaunchTimeout = 702,
  kCudaErrorAssert = 710,
  kCudaErrorHardwareStackError = 714,
  kCudaErrorIllegalInstruction = 715,
  kCudaErrorMisalignedAddress = 716,
  kCudaErrorInvalidAddressSpace = 717,
  kCudaErrorInvalidPc = 718,
  kCudaErrorLaunchFailed = 719,
  kCudaErrorUnknown = 999,
};

// CUdevice_attribute values.
enum CudaDeviceAttribute : int {
  kCudaAttrMaxThreadsPerBlock = 1,
  kCudaAttrMaxBlockDimX = 2,
  kCudaAttrMaxBlockDimY = 3,
  kCudaAttrMaxBlockDimZ = 4,
  kCudaAttrMaxGridDimX = 5,
  kCudaAttrMaxGridDimY = 6,
  kCudaAttrMaxGridDimZ = 7,
  kCudaAttrMaxSharedMemoryPerBlock = 8,
  kCudaAttrWarpSize = 10,
  kCudaAttrMaxRegistersPerBlock = 12,
  kCudaAttrClockRateKhz = 13,
  kCudaAttrMultiprocessorCount = 16,
  kCudaAttrComputeCapabilityMajor = 75,
  kCudaAttrComputeCapabilityMinor = 76,
  kCudaAttrMaxSharedMemoryPerBlockOptin = 97,
};

// CUfunction_attribute values.
enum CudaFunctionAttribute : int {
  kCudaFuncAttrMaxThreadsPerBlock = 0,
  kCudaFuncAttrSharedSizeBytes = 1,
  kCudaFuncAttrLocalSizeBytes = 3,
  kCudaFuncAttrNumRegs = 4,
};

// CUjit_option values.
enum CudaJitOption : int {
  kCudaJitInfoLogBuffer = 3,
  kCudaJitInfoLogBufferSizeBytes = 4,
  kCudaJitErrorLogBuffer = 5,
  kCudaJitErrorLogBufferSizeBytes = 6,
  kCudaJitLogVerbose = 12,
};

// The driver entry points used, as plain function pointers. CudaDriver::Open
// fills them with dlsym; tests fill them with fakes (CudaDriver::FromApi).
struct CudaApi {
  CUresult (*cuInit)(unsigned flags) = nullptr;
  CUresult (*cuDriverGetVersion)(int* version) = nullptr;
  CUresult (*cuDeviceGetCount)(int* count) = nullptr;
  CUresult (*cuDeviceGet)(CUdevice* device, int ordinal) = nullptr;
  CUresult (*cuDeviceGetName)(char* name, int length, CUdevice device) = nullptr;
  CUresult (*cuDeviceGetAttribute)(int* value, int attribute, CUdevice device) = nullptr;
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext* context, CUdevice device) = nullptr;
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice device) = nullptr;
  CUresult (*cuCtxSetCurrent)(CUcontext context) = nullptr;
  CUresult (*cuCtxSynchronize)() = nullptr;
  CUresult (*cuModuleLoadDataEx)(CUmodule* module, const void* image, unsigned num_options,
                                 int* options, void** option_values) = nullptr;
  CUresult (*cuModuleUnload)(CUmodule module) = nullptr;
  CUresult (*cuModuleGetFunction)(CUfunction* function, CUmodule module,
                                  const char* name) = nullptr;
  CUresult (*cuFuncGetAttribute)(int* value, int attribute, CUfunction function) = nullptr;
  CUresult (*cuLaunchKernel)(CUfunction function, unsigned grid_x, unsigned grid_y, unsigned grid_z,
                             unsigned block_x, unsigned block_y, unsigned block_z,
                             unsigned shared_bytes, CUstream stream, void** kernel_params,
                             void** extra) = nullptr;
  CUresult (*cuMemAlloc)(CUdeviceptr* pointer, size_t bytes) = nullptr;
  CUresult (*cuMemFree)(CUdeviceptr pointer) = nullptr;
  CUresult (*cuMemcpyHtoD)(CUdeviceptr destination, const void* source, size_t bytes) = nullptr;
  CUresult (*cuMemcpyDtoH)(void* destination, CUdeviceptr source, size_t bytes) = nullptr;
  CUresult (*cuEventCreate)(CUevent* event, unsigned flags) = nullptr;
  CUresult (*cuEventRecord)(CUevent event, CUstream stream) = nullptr;
  CUresult (*cuEventSynchronize)(CUevent event) = nullptr;
  CUresult (*cuEventElapsedTime)(float* milliseconds, CUevent start, CUevent end) = nullptr;
  CUresult (*cuEventDestroy)(CUevent event) = nullptr;
  CUresult (*cuGetErrorName)(CUresult error, const char** name) = nullptr;
  CUresult (*cuGetErrorString)(CUresult error, const char** text) = nullptr;
};

// What the agent reports and checks launches against.
struct GpuDeviceProperties {
  int ordinal = 0;
  std::string name;  // e.g. "NVIDIA H100 80GB HBM3"
  int compute_capability_major = 0;
  int compute_capability_minor = 0;
  int multiprocessor_count = 0;
  int clock_rate_khz = 0;  // the SM clock the driver reports (boost), kHz
  int warp_size = 0;
  int max_threads_per_block = 0;
  std::array<int, 3> max_block_dims = {0, 0, 0};
  std::array<int, 3> max_grid_dims = {0, 0, 0};
  int64_t max_shared_memory_per_block = 0;        // without opt-in (static shared)
  int64_t max_shared_memory_per_block_optin = 0;  // with cuFuncSetAttribute opt-in
  int max_registers_per_block = 0;
};

inline constexpr char kLibCudaName[] = "libcuda.so.1";

class CudaDriver {
 public:
  // dlopen()s `library` (a soname or a path), resolves every entry point
  // (the _v2 symbols where the driver has them) and calls cuInit(0).
  // FailedPrecondition "no CUDA driver: ..." when the library cannot be
  // opened, lacks an entry point, is the toolkit's stub, or cuInit fails
  // (e.g. no device, driver too old).
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<CudaDriver>> Open(
      const std::string& library = kLibCudaName);

  // A driver over given entry points (tests: fakes). Every entry point but
  // cuDriverGetVersion must be set (FailedPrecondition naming the missing
  // ones otherwise); calls api.cuInit(0), with the same errors as Open.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<CudaDriver>> FromApi(const CudaApi& api,
                                                                           std::string origin);

  CudaDriver(const CudaDriver&) = delete;
  CudaDriver& operator=(const CudaDriver&) = delete;

  const CudaApi& api() const { return api_; }
  // Where the entry points came from ("libcuda.so.1", or the FromApi origin).
  const std::string& origin() const { return origin_; }
  // cuDriverGetVersion, e.g. 12040 for CUDA 12.4; 0 if unknown.
  int version() const { return version_; }

  // OK for CUDA_SUCCESS; otherwise a Status whose message is
  // "<call> failed: <CUDA_ERROR_NAME> (<driver's description>)" and whose
  // payload carries `result` (CudaResultOf). The code follows abseil's
  // guidance: ResourceExhausted for out of memory, FailedPrecondition for a
  // missing driver or device, InvalidArgument for bad values and images,
  // NotFound, Internal for kernel faults and the rest.
  [[nodiscard]] absl::Status Check(CUresult result, absl::string_view call) const;
  // "CUDA_ERROR_OUT_OF_MEMORY": the driver's name, else a built-in one, else
  // "CUresult <n>".
  std::string ErrorName(CUresult result) const;

  // cuDeviceGetCount.
  [[nodiscard]] absl::StatusOr<int> DeviceCount() const;
  // The device at `ordinal`. FailedPrecondition when there is none at all,
  // InvalidArgument (naming the count) when `ordinal` is out of range.
  [[nodiscard]] absl::StatusOr<CUdevice> Device(int ordinal) const;
  [[nodiscard]] absl::StatusOr<GpuDeviceProperties> Properties(CUdevice device) const;

 private:
  CudaDriver(const CudaApi& api, std::string origin) : api_(api), origin_(std::move(origin)) {}
  [[nodiscard]] absl::Status Init();
  [[nodiscard]] absl::StatusOr<int> Attribute(int attribute, CUdevice device) const;

  CudaApi api_;
  std::string origin_;
  int version_ = 0;
};

// The CUresult behind a Status from CudaDriver::Check, if any.
std::optional<CUresult> CudaResultOf(const absl::Status& status);

// True for the errors after which the CUDA context (and, per the driver
// documentation, the process) cannot be used again: illegal address,
// misaligned address, illegal instruction, hardware stack error, invalid PC
// or address space, launch failure or timeout, device-side assert, an
// uncorrectable ECC error, a contained error, and unknown errors.
bool IsContextLost(CUresult result);
bool IsContextLost(const absl::Status& status);

// The device's primary context, retained and released (RAII). Retain also
// makes it current on the calling thread.
class CudaContext {
 public:
  [[nodiscard]] static absl::StatusOr<CudaContext> Retain(const CudaDriver& driver,
                                                          CUdevice device);
  CudaContext(CudaContext&& other) noexcept;
  CudaContext& operator=(CudaContext&& other) noexcept;
  ~CudaContext();

  // cuCtxSetCurrent on the calling thread.
  [[nodiscard]] absl::Status MakeCurrent() const;
  // cuCtxSynchronize: waits for all work, returns the first asynchronous error.
  [[nodiscard]] absl::Status Synchronize() const;
  CUcontext get() const { return context_; }

 private:
  CudaContext(const CudaDriver* driver, CUdevice device, CUcontext context)
      : driver_(driver), device_(device), context_(context) {}
  void Release();

  const CudaDriver* driver_ = nullptr;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
};

// A loaded module (cuModuleLoadDataEx), unloaded on destruction.
class CudaModule {
 public:
  // JIT-compiles `ptx` for the current context's device. On failure the
  // message includes the JIT's error log (ptxas's diagnostics).
  [[nodiscard]] static absl::StatusOr<CudaModule> Load(const CudaDriver& driver,
                                                       const std::string& ptx);
  CudaModule(CudaModule&& other) noexcept;
  CudaModule& operator=(CudaModule&& other) noexcept;
  ~CudaModule();

  // cuModuleGetFunction; NotFound naming `entry` when the module lacks it.
  [[nodiscard]] absl::StatusOr<CUfunction> Function(const std::string& entry) const;
  // The JIT's info log of the load (register and spill counts), may be empty.
  const std::string& info_log() const { return info_log_; }

 private:
  CudaModule(const CudaDriver* driver, CUmodule module, std::string info_log)
      : driver_(driver), module_(module), info_log_(std::move(info_log)) {}

  const CudaDriver* driver_ = nullptr;
  CUmodule module_ = nullptr;
  std::string info_log_;
};

// cuFuncGetAttribute.
[[nodiscard]] absl::StatusOr<int> FunctionAttribute(const CudaDriver& driver, CUfunction function,
                                                    int attribute);

// Device memory (cuMemAlloc / cuMemFree).
class DeviceBuffer {
 public:
  // ResourceExhausted naming the size when the device is out of memory.
  [[nodiscard]] static absl::StatusOr<DeviceBuffer> Allocate(const CudaDriver& driver,
                                                             size_t bytes);
  DeviceBuffer() = default;
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  ~DeviceBuffer();

  [[nodiscard]] absl::Status CopyFromHost(const void* source, size_t bytes) const;
  [[nodiscard]] absl::Status CopyToHost(void* destination, size_t bytes) const;
  CUdeviceptr get() const { return pointer_; }
  size_t bytes() const { return bytes_; }

 private:
  DeviceBuffer(const CudaDriver* driver, CUdeviceptr pointer, size_t bytes)
      : driver_(driver), pointer_(pointer), bytes_(bytes) {}
  void Free();

  const CudaDriver* driver_ = nullptr;
  CUdeviceptr pointer_ = 0;
  size_t bytes_ = 0;
};

// A timing event (cuEventCreate with default flags).
class CudaEvent {
 public:
  [[nodiscard]] static absl::StatusOr<CudaEvent> Create(const CudaDriver& driver);
  CudaEvent(CudaEvent&& other) noexcept;
  CudaEvent& operator=(CudaEvent&& other) noexcept;
  ~CudaEvent();

  // cuEventRecord on the legacy default stream.
  [[nodiscard]] absl::Status Record() const;
  [[nodiscard]] absl::Status Synchronize() const;
  // cuEventElapsedTime(start, this), in milliseconds (about 0.5 us resolution).
  [[nodiscard]] absl::StatusOr<float> MillisecondsSince(const CudaEvent& start) const;
  CUevent get() const { return event_; }

 private:
  CudaEvent(const CudaDriver* driver, CUevent event) : driver_(driver), event_(event) {}

  const CudaDriver* driver_ = nullptr;
  CUevent event_ = nullptr;
};

}  // namespace tunefleet

#endif  // TUNEFLEET_KERNEL_RUNTIME_CUDA_DRIVER_H_
