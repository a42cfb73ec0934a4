#include "kernel_runtime/cuda_driver.h"

#include <dlfcn.h>

#include <initializer_list>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tunefleet {
namespace {

constexpr char kResultPayload[] = "tunefleet/cuda-result";

// Names for the codes this file and its callers care about, used when the
// driver cannot name an error itself (the toolkit's stub library, say).
const char* BuiltinErrorName(CUresult result) {
  switch (result) {
    case kCudaSuccess:
      return "CUDA_SUCCESS";
    case kCudaErrorInvalidValue:
      return "CUDA_ERROR_INVALID_VALUE";
    case kCudaErrorOutOfMemory:
      return "CUDA_ERROR_OUT_OF_MEMORY";
    case kCudaErrorNotInitialized:
      return "CUDA_ERROR_NOT_INITIALIZED";
    case kCudaErrorStubLibrary:
      return "CUDA_ERROR_STUB_LIBRARY";
    case kCudaErrorInsufficientDriver:
      return "CUDA_ERROR_INSUFFICIENT_DRIVER";
    case kCudaErrorNoDevice:
      return "CUDA_ERROR_NO_DEVICE";
    case kCudaErrorInvalidDevice:
      return "CUDA_ERROR_INVALID_DEVICE";
    case kCudaErrorInvalidImage:
      return "CUDA_ERROR_INVALID_IMAGE";
    case kCudaErrorNoBinaryForGpu:
      return "CUDA_ERROR_NO_BINARY_FOR_GPU";
    case kCudaErrorEccUncorrectable:
      return "CUDA_ERROR_ECC_UNCORRECTABLE";
    case kCudaErrorInvalidPtx:
      return "CUDA_ERROR_INVALID_PTX";
    case kCudaErrorJitCompilerNotFound:
      return "CUDA_ERROR_JIT_COMPILER_NOT_FOUND";
    case kCudaErrorUnsupportedPtxVersion:
      return "CUDA_ERROR_UNSUPPORTED_PTX_VERSION";
    case kCudaErrorContained:
      return "CUDA_ERROR_CONTAINED";
    case kCudaErrorNotFound:
      return "CUDA_ERROR_NOT_FOUND";
    case kCudaErrorIllegalAddress:
      return "CUDA_ERROR_ILLEGAL_ADDRESS";
    case kCudaErrorLaunchOutOfResources:
      return "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES";
    case kCudaErrorLaunchTimeout:
      return "CUDA_ERROR_LAUNCH_TIMEOUT";
    case kCudaErrorAssert:
      return "CUDA_ERROR_ASSERT";
    case kCudaErrorHardwareStackError:
      return "CUDA_ERROR_HARDWARE_STACK_ERROR";
    case kCudaErrorIllegalInstruction:
      return "CUDA_ERROR_ILLEGAL_INSTRUCTION";
    case kCudaErrorMisalignedAddress:
      return "CUDA_ERROR_MISALIGNED_ADDRESS";
    case kCudaErrorInvalidAddressSpace:
      return "CUDA_ERROR_INVALID_ADDRESS_SPACE";
    case kCudaErrorInvalidPc:
      return "CUDA_ERROR_INVALID_PC";
    case kCudaErrorLaunchFailed:
      return "CUDA_ERROR_LAUNCH_FAILED";
    case kCudaErrorUnknown:
      return "CUDA_ERROR_UNKNOWN";
  }
  return nullptr;
}

absl::StatusCode CodeFor(CUresult result) {
  switch (result) {
    case kCudaErrorOutOfMemory:
      return absl::StatusCode::kResourceExhausted;
    case kCudaErrorNotInitialized:
    case kCudaErrorStubLibrary:
    case kCudaErrorInsufficientDriver:
    case kCudaErrorNoDevice:
    case kCudaErrorJitCompilerNotFound:
      return absl::StatusCode::kFailedPrecondition;
    case kCudaErrorInvalidValue:
    case kCudaErrorInvalidDevice:
    case kCudaErrorInvalidImage:
    case kCudaErrorNoBinaryForGpu:
    case kCudaErrorInvalidPtx:
    case kCudaErrorUnsupportedPtxVersion:
    case kCudaErrorLaunchOutOfResources:
      return absl::StatusCode::kInvalidArgument;
    case kCudaErrorNotFound:
      return absl::StatusCode::kNotFound;
    default:
      return absl::StatusCode::kInternal;
  }
}

// The first of `names` that `library` exports, or null.
void* FindSymbol(void* library, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    if (void* symbol = dlsym(library, name)) return symbol;
  }
  return nullptr;
}

// Calls f(slot, names) for every required entry point of `api`, with the
// symbol names to try in order: the versioned names first, because cuda.h
// maps e.g. cuMemAlloc to cuMemAlloc_v2 and the unversioned symbol is the
// legacy 32-bit-pointer ABI. (cuDriverGetVersion is optional and not here.)
template <typename F>
void ForEachEntryPoint(CudaApi& api, F f) {
  f(api.cuInit, {"cuInit"});
  f(api.cuDeviceGetCount, {"cuDeviceGetCount"});
  f(api.cuDeviceGet, {"cuDeviceGet"});
  f(api.cuDeviceGetName, {"cuDeviceGetName"});
  f(api.cuDeviceGetAttribute, {"cuDeviceGetAttribute"});
  f(api.cuDevicePrimaryCtxRetain, {"cuDevicePrimaryCtxRetain"});
  f(api.cuDevicePrimaryCtxRelease, {"cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"});
  f(api.cuCtxSetCurrent, {"cuCtxSetCurrent"});
  f(api.cuCtxSynchronize, {"cuCtxSynchronize"});
  f(api.cuModuleLoadDataEx, {"cuModuleLoadDataEx"});
  f(api.cuModuleUnload, {"cuModuleUnload"});
  f(api.cuModuleGetFunction, {"cuModuleGetFunction"});
  f(api.cuFuncGetAttribute, {"cuFuncGetAttribute"});
  f(api.cuLaunchKernel, {"cuLaunchKernel"});
  f(api.cuMemAlloc, {"cuMemAlloc_v2"});
  f(api.cuMemFree, {"cuMemFree_v2"});
  f(api.cuMemcpyHtoD, {"cuMemcpyHtoD_v2"});
  f(api.cuMemcpyDtoH, {"cuMemcpyDtoH_v2"});
  f(api.cuEventCreate, {"cuEventCreate"});
  f(api.cuEventRecord, {"cuEventRecord"});
  f(api.cuEventSynchronize, {"cuEventSynchronize"});
  // CUDA 13 renamed it to _v2 (same signature); older drivers only have the
  // original.
  f(api.cuEventElapsedTime, {"cuEventElapsedTime_v2", "cuEventElapsedTime"});
  f(api.cuEventDestroy, {"cuEventDestroy_v2"});
  f(api.cuGetErrorName, {"cuGetErrorName"});
  f(api.cuGetErrorString, {"cuGetErrorString"});
}

// Trims a JIT log buffer to its NUL and surrounding whitespace.
std::string LogText(const std::vector<char>& buffer) {
  std::string text(buffer.data());
  return std::string(absl::StripAsciiWhitespace(text));
}

}  // namespace

absl::StatusOr<std::unique_ptr<CudaDriver>> CudaDriver::Open(const std::string& library) {
  // RTLD_LOCAL: the driver's symbols stay out of the global namespace, where
  // a kernel artifact or another library might collide with them.
  dlerror();
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = dlerror();
    return absl::FailedPreconditionError(absl::StrCat("no CUDA driver: dlopen(", library,
                                                      "): ", error != nullptr ? error : "failed"));
  }
  CudaApi api;
  std::vector<std::string> missing;
  ForEachEntryPoint(api, [&](auto& slot, std::initializer_list<const char*> names) {
    void* symbol = FindSymbol(handle, names);
    if (symbol == nullptr) missing.push_back(*names.begin());
    slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(symbol);
  });
  api.cuDriverGetVersion =
      reinterpret_cast<decltype(api.cuDriverGetVersion)>(dlsym(handle, "cuDriverGetVersion"));
  if (!missing.empty()) {
    // Not dlclose()d: a half-usable driver may still have started threads.
    return absl::FailedPreconditionError(
        absl::StrCat("no CUDA driver: ", library, " lacks ", absl::StrJoin(missing, ", "),
                     " (a driver older than CUDA 11, or not libcuda at all)"));
  }
  std::unique_ptr<CudaDriver> driver(new CudaDriver(api, library));
  if (absl::Status init = driver->Init(); !init.ok()) return init;
  return driver;
}

absl::StatusOr<std::unique_ptr<CudaDriver>> CudaDriver::FromApi(const CudaApi& api,
                                                                std::string origin) {
  std::vector<std::string> missing;
  CudaApi copy = api;
  ForEachEntryPoint(copy, [&](auto& slot, std::initializer_list<const char*> names) {
    if (slot == nullptr) missing.push_back(*names.begin());
  });
  if (!missing.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("no CUDA driver: ", origin, " lacks ", absl::StrJoin(missing, ", ")));
  }
  std::unique_ptr<CudaDriver> driver(new CudaDriver(api, std::move(origin)));
  if (absl::Status init = driver->Init(); !init.ok()) return init;
  return driver;
}

absl::Status CudaDriver::Init() {
  const CUresult result = api_.cuInit(0);
  if (result == kCudaErrorStubLibrary) {
    return absl::FailedPreconditionError(
        absl::StrCat("no CUDA driver: ", origin_,
                     " is the CUDA toolkit's stub library (CUDA_ERROR_STUB_LIBRARY), not a driver; "
                     "install the NVIDIA driver or take the stubs directory off the library path"));
  }
  if (result == kCudaErrorNoDevice) {
    return absl::FailedPreconditionError(
        absl::StrCat("no CUDA device: cuInit in ", origin_, " reports CUDA_ERROR_NO_DEVICE"));
  }
  if (result != kCudaSuccess) {
    absl::Status failed = Check(result, "cuInit");
    return absl::FailedPreconditionError(
        absl::StrCat("no usable CUDA driver (", origin_, "): ", failed.message()));
  }
  if (api_.cuDriverGetVersion != nullptr && api_.cuDriverGetVersion(&version_) != kCudaSuccess) {
    version_ = 0;
  }
  return absl::OkStatus();
}

std::string CudaDriver::ErrorName(CUresult result) const {
  const char* name = nullptr;
  if (api_.cuGetErrorName(result, &name) == kCudaSuccess && name != nullptr) {
    return name;
  }
  if (const char* builtin = BuiltinErrorName(result)) return builtin;
  return absl::StrCat("CUresult ", result);
}

absl::Status CudaDriver::Check(CUresult result, absl::string_view call) const {
  if (result == kCudaSuccess) return absl::OkStatus();
  std::string message = absl::StrCat(call, " failed: ", ErrorName(result));
  const char* description = nullptr;
  if (api_.cuGetErrorString(result, &description) == kCudaSuccess && description != nullptr) {
    absl::StrAppend(&message, " (", description, ")");
  }
  absl::Status status{CodeFor(result), message};
  status.SetPayload(kResultPayload, absl::Cord(absl::StrCat(result)));
  return status;
}

absl::StatusOr<int> CudaDriver::DeviceCount() const {
  int count = 0;
  if (absl::Status s = Check(api_.cuDeviceGetCount(&count), "cuDeviceGetCount"); !s.ok()) {
    return s;
  }
  return count;
}

absl::StatusOr<CUdevice> CudaDriver::Device(int ordinal) const {
  absl::StatusOr<int> count = DeviceCount();
  if (!count.ok()) return count.status();
  if (*count == 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("no CUDA device: the driver (", origin_, ") reports 0 devices"));
  }
  if (ordinal < 0 || ordinal >= *count) {
    return absl::InvalidArgumentError(absl::StrCat("CUDA device ", ordinal,
                                                   " does not exist: the driver reports ", *count,
                                                   " device(s), 0 to ", *count - 1));
  }
  CUdevice device = 0;
  if (absl::Status s = Check(api_.cuDeviceGet(&device, ordinal), "cuDeviceGet"); !s.ok()) return s;
  return device;
}

absl::StatusOr<int> CudaDriver::Attribute(int attribute, CUdevice device) const {
  int value = 0;
  absl::Status s = Check(api_.cuDeviceGetAttribute(&value, attribute, device),
                         absl::StrCat("cuDeviceGetAttribute(attribute ", attribute, ")"));
  if (!s.ok()) return s;
  return value;
}

absl::StatusOr<GpuDeviceProperties> CudaDriver::Properties(CUdevice device) const {
  GpuDeviceProperties props;
  props.ordinal = device;
  char name[256] = {};
  if (absl::Status s =
          Check(api_.cuDeviceGetName(name, sizeof(name) - 1, device), "cuDeviceGetName");
      !s.ok()) {
    return s;
  }
  props.name = name;
  struct Field {
    int attribute;
    int* value;
  };
  int shared = 0, shared_optin = 0;
  const Field fields[] = {
      {kCudaAttrComputeCapabilityMajor, &props.compute_capability_major},
      {kCudaAttrComputeCapabilityMinor, &props.compute_capability_minor},
      {kCudaAttrMultiprocessorCount, &props.multiprocessor_count},
      {kCudaAttrClockRateKhz, &props.clock_rate_khz},
      {kCudaAttrWarpSize, &props.warp_size},
      {kCudaAttrMaxThreadsPerBlock, &props.max_threads_per_block},
      {kCudaAttrMaxBlockDimX, &props.max_block_dims[0]},
      {kCudaAttrMaxBlockDimY, &props.max_block_dims[1]},
      {kCudaAttrMaxBlockDimZ, &props.max_block_dims[2]},
      {kCudaAttrMaxGridDimX, &props.max_grid_dims[0]},
      {kCudaAttrMaxGridDimY, &props.max_grid_dims[1]},
      {kCudaAttrMaxGridDimZ, &props.max_grid_dims[2]},
      {kCudaAttrMaxSharedMemoryPerBlock, &shared},
      {kCudaAttrMaxSharedMemoryPerBlockOptin, &shared_optin},
      {kCudaAttrMaxRegistersPerBlock, &props.max_registers_per_block},
  };
  for (const Field& field : fields) {
    absl::StatusOr<int> value = Attribute(field.attribute, device);
    if (!value.ok()) return value.status();
    *field.value = *value;
  }
  props.max_shared_memory_per_block = shared;
  props.max_shared_memory_per_block_optin = shared_optin;
  return props;
}

std::optional<CUresult> CudaResultOf(const absl::Status& status) {
  auto payload = status.GetPayload(kResultPayload);
  if (!payload.has_value()) return std::nullopt;
  int result = 0;
  if (!absl::SimpleAtoi(std::string(*payload), &result)) return std::nullopt;
  return result;
}

bool IsContextLost(CUresult result) {
  switch (result) {
    case kCudaErrorEccUncorrectable:
    case kCudaErrorContained:
    case kCudaErrorIllegalAddress:
    case kCudaErrorLaunchTimeout:
    case kCudaErrorAssert:
    case kCudaErrorHardwareStackError:
    case kCudaErrorIllegalInstruction:
    case kCudaErrorMisalignedAddress:
    case kCudaErrorInvalidAddressSpace:
    case kCudaErrorInvalidPc:
    case kCudaErrorLaunchFailed:
    case kCudaErrorUnknown:
      return true;
    default:
      return false;
  }
}

bool IsContextLost(const absl::Status& status) {
  std::optional<CUresult> result = CudaResultOf(status);
  return result.has_value() && IsContextLost(*result);
}

// ---- CudaContext

absl::StatusOr<CudaContext> CudaContext::Retain(const CudaDriver& driver, CUdevice device) {
  const CudaApi& api = driver.api();
  CUcontext context = nullptr;
  if (absl::Status s =
          driver.Check(api.cuDevicePrimaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain");
      !s.ok()) {
    return s;
  }
  CudaContext retained(&driver, device, context);
  if (absl::Status s = retained.MakeCurrent(); !s.ok()) return s;
  return retained;
}

CudaContext::CudaContext(CudaContext&& other) noexcept
    : driver_(std::exchange(other.driver_, nullptr)),
      device_(other.device_),
      context_(std::exchange(other.context_, nullptr)) {}

CudaContext& CudaContext::operator=(CudaContext&& other) noexcept {
  if (this != &other) {
    Release();
    driver_ = std::exchange(other.driver_, nullptr);
    device_ = other.device_;
    context_ = std::exchange(other.context_, nullptr);
  }
  return *this;
}

CudaContext::~CudaContext() { Release(); }

void CudaContext::Release() {
  if (driver_ != nullptr && context_ != nullptr) {
    driver_->api().cuDevicePrimaryCtxRelease(device_);
  }
  driver_ = nullptr;
  context_ = nullptr;
}

absl::Status CudaContext::MakeCurrent() const {
  return driver_->Check(driver_->api().cuCtxSetCurrent(context_), "cuCtxSetCurrent");
}

absl::Status CudaContext::Synchronize() const {
  return driver_->Check(driver_->api().cuCtxSynchronize(), "cuCtxSynchronize");
}

// ---- CudaModule

absl::StatusOr<CudaModule> CudaModule::Load(const CudaDriver& driver, const std::string& ptx) {
  const CudaApi& api = driver.api();
  constexpr size_t kLogBytes = 16 << 10;
  std::vector<char> error_log(kLogBytes, '\0');
  std::vector<char> info_log(kLogBytes, '\0');
  int options[] = {kCudaJitErrorLogBuffer, kCudaJitErrorLogBufferSizeBytes, kCudaJitInfoLogBuffer,
                   kCudaJitInfoLogBufferSizeBytes, kCudaJitLogVerbose};
  // Sizes and flags travel in the pointer-sized slots by value, as the
  // driver API specifies for non-pointer options.
  void* values[] = {error_log.data(), reinterpret_cast<void*>(uintptr_t{kLogBytes - 1}),
                    info_log.data(), reinterpret_cast<void*>(uintptr_t{kLogBytes - 1}),
                    reinterpret_cast<void*>(uintptr_t{1})};
  CUmodule module = nullptr;
  // The image must be NUL-terminated PTX text: std::string guarantees it.
  const CUresult result = api.cuModuleLoadDataEx(
      &module, ptx.c_str(), sizeof(options) / sizeof(options[0]), options, values);
  if (result != kCudaSuccess) {
    absl::Status failed = driver.Check(result, "cuModuleLoadDataEx");
    const std::string log = LogText(error_log);
    absl::Status with_log{
        failed.code(),
        absl::StrCat(failed.message(), "; JIT log: ", log.empty() ? "(empty)" : log)};
    with_log.SetPayload(kResultPayload, absl::Cord(absl::StrCat(result)));
    return with_log;
  }
  return CudaModule(&driver, module, LogText(info_log));
}

CudaModule::CudaModule(CudaModule&& other) noexcept
    : driver_(std::exchange(other.driver_, nullptr)),
      module_(std::exchange(other.module_, nullptr)),
      info_log_(std::move(other.info_log_)) {}

CudaModule& CudaModule::operator=(CudaModule&& other) noexcept {
  if (this != &other) {
    if (driver_ != nullptr && module_ != nullptr) driver_->api().cuModuleUnload(module_);
    driver_ = std::exchange(other.driver_, nullptr);
    module_ = std::exchange(other.module_, nullptr);
    info_log_ = std::move(other.info_log_);
  }
  return *this;
}

CudaModule::~CudaModule() {
  if (driver_ != nullptr && module_ != nullptr) driver_->api().cuModuleUnload(module_);
}

absl::StatusOr<CUfunction> CudaModule::Function(const std::string& entry) const {
  CUfunction function = nullptr;
  const CUresult result = driver_->api().cuModuleGetFunction(&function, module_, entry.c_str());
  if (result == kCudaErrorNotFound) {
    absl::Status status = absl::NotFoundError(
        absl::StrCat("the PTX module has no entry \"", entry,
                     "\" (cuModuleGetFunction: ", driver_->ErrorName(result), ")"));
    status.SetPayload(kResultPayload, absl::Cord(absl::StrCat(result)));
    return status;
  }
  if (absl::Status s = driver_->Check(result, absl::StrCat("cuModuleGetFunction(", entry, ")"));
      !s.ok()) {
    return s;
  }
  return function;
}

[[nodiscard]] absl::StatusOr<int> FunctionAttribute(const CudaDriver& driver, CUfunction function,
                                                    int attribute) {
  int value = 0;
  absl::Status s = driver.Check(driver.api().cuFuncGetAttribute(&value, attribute, function),
                                absl::StrCat("cuFuncGetAttribute(attribute ", attribute, ")"));
  if (!s.ok()) return s;
  return value;
}

// ---- DeviceBuffer

absl::StatusOr<DeviceBuffer> DeviceBuffer::Allocate(const CudaDriver& driver, size_t bytes) {
  CUdeviceptr pointer = 0;
  // cuMemAlloc rejects 0 bytes; an empty tensor still gets a valid pointer.
  const size_t allocated = bytes > 0 ? bytes : 256;
  absl::Status s = driver.Check(driver.api().cuMemAlloc(&pointer, allocated),
                                absl::StrCat("cuMemAlloc_v2(", allocated, " bytes)"));
  if (!s.ok()) return s;
  return DeviceBuffer(&driver, pointer, bytes);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : driver_(std::exchange(other.driver_, nullptr)),
      pointer_(std::exchange(other.pointer_, 0)),
      bytes_(std::exchange(other.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    Free();
    driver_ = std::exchange(other.driver_, nullptr);
    pointer_ = std::exchange(other.pointer_, 0);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() { Free(); }

void DeviceBuffer::Free() {
  if (driver_ != nullptr && pointer_ != 0) driver_->api().cuMemFree(pointer_);
  driver_ = nullptr;
  pointer_ = 0;
  bytes_ = 0;
}

absl::Status DeviceBuffer::CopyFromHost(const void* source, size_t bytes) const {
  if (bytes > bytes_) {
    return absl::InvalidArgumentError(
        absl::StrCat("copy of ", bytes, " bytes into a device buffer of ", bytes_));
  }
  if (bytes == 0) return absl::OkStatus();
  return driver_->Check(driver_->api().cuMemcpyHtoD(pointer_, source, bytes),
                        absl::StrCat("cuMemcpyHtoD_v2(", bytes, " bytes)"));
}

absl::Status DeviceBuffer::CopyToHost(void* destination, size_t bytes) const {
  if (bytes > bytes_) {
    return absl::InvalidArgumentError(
        absl::StrCat("copy of ", bytes, " bytes out of a device buffer of ", bytes_));
  }
  if (bytes == 0) return absl::OkStatus();
  return driver_->Check(driver_->api().cuMemcpyDtoH(destination, pointer_, bytes),
                        absl::StrCat("cuMemcpyDtoH_v2(", bytes, " bytes)"));
}

// ---- CudaEvent

absl::StatusOr<CudaEvent> CudaEvent::Create(const CudaDriver& driver) {
  CUevent event = nullptr;
  // Flags 0: timing enabled, and synchronising spins rather than yields, for
  // the lowest latency between the GPU finishing and the host noticing.
  if (absl::Status s = driver.Check(driver.api().cuEventCreate(&event, 0), "cuEventCreate");
      !s.ok()) {
    return s;
  }
  return CudaEvent(&driver, event);
}

CudaEvent::CudaEvent(CudaEvent&& other) noexcept
    : driver_(std::exchange(other.driver_, nullptr)),
      event_(std::exchange(other.event_, nullptr)) {}

CudaEvent& CudaEvent::operator=(CudaEvent&& other) noexcept {
  if (this != &other) {
    if (driver_ != nullptr && event_ != nullptr) driver_->api().cuEventDestroy(event_);
    driver_ = std::exchange(other.driver_, nullptr);
    event_ = std::exchange(other.event_, nullptr);
  }
  return *this;
}

CudaEvent::~CudaEvent() {
  if (driver_ != nullptr && event_ != nullptr) driver_->api().cuEventDestroy(event_);
}

absl::Status CudaEvent::Record() const {
  return driver_->Check(driver_->api().cuEventRecord(event_, nullptr), "cuEventRecord");
}

absl::Status CudaEvent::Synchronize() const {
  return driver_->Check(driver_->api().cuEventSynchronize(event_), "cuEventSynchronize");
}

absl::StatusOr<float> CudaEvent::MillisecondsSince(const CudaEvent& start) const {
  float milliseconds = 0;
  absl::Status s = driver_->Check(
      driver_->api().cuEventElapsedTime(&milliseconds, start.event_, event_), "cuEventElapsedTime");
  if (!s.ok()) return s;
  return milliseconds;
}

}  // namespace tunefleet
