#include "kernel_runtime/cuda_driver.h"

#include <unistd.h>

#include <memory>
#include <utility>

#include "common/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernel_runtime/cuda_event_clock.h"
#include "kernel_runtime/fake_cuda_driver.h"

namespace tunefleet {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using ::tunefleet::testing::FakeCuda;
using ::tunefleet::testing::FakeKernel;
using ::tunefleet::testing::FakePtx;

constexpr char kToolkitStub[] = "/usr/local/cuda/lib64/stubs/libcuda.so";

std::unique_ptr<CudaDriver> OpenFake(const FakeCuda& fake) {
  absl::StatusOr<std::unique_ptr<CudaDriver>> driver = CudaDriver::FromApi(fake.api(), "fake");
  EXPECT_TRUE(driver.ok()) << driver.status();
  return std::move(driver).value();
}

// ---- Opening the real library: these run on any machine.

TEST(CudaDriverTest, MissingLibraryIsFailedPreconditionNamingDlopen) {
  absl::StatusOr<std::unique_ptr<CudaDriver>> driver =
      CudaDriver::Open("/nonexistent/dir/libcuda.so.1");
  ASSERT_FALSE(driver.ok());
  EXPECT_EQ(driver.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(driver.status().message()),
              StartsWith("no CUDA driver: dlopen(/nonexistent/dir/libcuda.so.1): "));
}

TEST(CudaDriverTest, LibraryThatIsNotTheDriverNamesTheMissingEntryPoints) {
  absl::StatusOr<std::unique_ptr<CudaDriver>> driver = CudaDriver::Open("libm.so.6");
  ASSERT_FALSE(driver.ok());
  EXPECT_EQ(driver.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(driver.status().message(), HasSubstr("no CUDA driver: libm.so.6 lacks cuInit"));
  EXPECT_THAT(driver.status().message(), HasSubstr("cuMemAlloc_v2"));
}

// The toolkit ships a libcuda.so whose every call returns
// CUDA_ERROR_STUB_LIBRARY; it must never pass for a driver.
TEST(CudaDriverTest, ToolkitStubIsRefusedAsNotADriver) {
  if (access(kToolkitStub, R_OK) != 0) {
    GTEST_SKIP() << "no CUDA toolkit stub at " << kToolkitStub;
  }
  absl::StatusOr<std::unique_ptr<CudaDriver>> driver = CudaDriver::Open(kToolkitStub);
  ASSERT_FALSE(driver.ok());
  EXPECT_EQ(driver.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(driver.status().message(), HasSubstr("no CUDA driver: "));
  EXPECT_THAT(driver.status().message(), HasSubstr("stub library"));
}

// ---- Everything else against the fake driver.

TEST(CudaDriverTest, FromApiNamesUnsetEntryPoints) {
  FakeCuda fake;
  CudaApi api = fake.api();
  api.cuLaunchKernel = nullptr;
  api.cuEventElapsedTime = nullptr;
  absl::StatusOr<std::unique_ptr<CudaDriver>> driver = CudaDriver::FromApi(api, "partial");
  EXPECT_EQ(driver.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(driver.status().message(),
              HasSubstr("partial lacks cuLaunchKernel, cuEventElapsedTime_v2"));
}

TEST(CudaDriverTest, InitWithoutADeviceIsFailedPrecondition) {
  FakeCuda fake;
  fake.set_init_result(kCudaErrorNoDevice);
  absl::StatusOr<std::unique_ptr<CudaDriver>> driver = CudaDriver::FromApi(fake.api(), "fake");
  EXPECT_EQ(driver.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(driver.status().message(), HasSubstr("no CUDA device: cuInit in fake"));
}

TEST(CudaDriverTest, ZeroDevicesAndOrdinalsOutOfRangeAreErrors) {
  FakeCuda fake;
  std::unique_ptr<CudaDriver> driver = OpenFake(fake);
  EXPECT_EQ(driver->version(), 12040);
  EXPECT_EQ(driver->Device(1).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(driver->Device(1).status().message(),
              HasSubstr("CUDA device 1 does not exist: the driver reports 1 device(s), 0 to 0"));
  fake.set_device_count(0);
  EXPECT_EQ(driver->Device(0).status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(driver->Device(0).status().message(), HasSubstr("no CUDA device"));
}

TEST(CudaDriverTest, PropertiesReadTheDeviceAttributes) {
  FakeCuda fake;
  fake.set_attribute(kCudaAttrComputeCapabilityMajor, 8);
  fake.set_attribute(kCudaAttrComputeCapabilityMinor, 6);
  std::unique_ptr<CudaDriver> driver = OpenFake(fake);
  absl::StatusOr<CUdevice> device = driver->Device(0);
  ASSERT_TRUE(device.ok()) << device.status();
  absl::StatusOr<GpuDeviceProperties> props = driver->Properties(*device);
  ASSERT_TRUE(props.ok()) << props.status();
  EXPECT_EQ(props->name, "Fake H100 0");
  EXPECT_EQ(props->compute_capability_major, 8);
  EXPECT_EQ(props->compute_capability_minor, 6);
  EXPECT_EQ(props->multiprocessor_count, 132);
  EXPECT_EQ(props->clock_rate_khz, 1980000);
  EXPECT_EQ(props->warp_size, 32);
  EXPECT_EQ(props->max_threads_per_block, 1024);
  EXPECT_EQ(props->max_block_dims, (std::array<int, 3>{1024, 1024, 64}));
  EXPECT_EQ(props->max_grid_dims, (std::array<int, 3>{2147483647, 65535, 65535}));
  EXPECT_EQ(props->max_shared_memory_per_block, 49152);
  EXPECT_EQ(props->max_shared_memory_per_block_optin, 232448);
  EXPECT_EQ(props->max_registers_per_block, 65536);
}

TEST(CudaDriverTest, CheckNamesTheCallAndTheErrorAndKeepsTheCode) {
  FakeCuda fake;
  std::unique_ptr<CudaDriver> driver = OpenFake(fake);
  EXPECT_TRUE(driver->Check(kCudaSuccess, "cuMemAlloc_v2").ok());

  absl::Status oom = driver->Check(kCudaErrorOutOfMemory, "cuMemAlloc_v2(64 bytes)");
  EXPECT_EQ(oom.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(oom.message(),
            "cuMemAlloc_v2(64 bytes) failed: CUDA_ERROR_OUT_OF_MEMORY (fake driver's description)");
  EXPECT_EQ(CudaResultOf(oom), kCudaErrorOutOfMemory);
  EXPECT_FALSE(IsContextLost(oom));

  absl::Status fault = driver->Check(kCudaErrorIllegalAddress, "cuCtxSynchronize");
  EXPECT_EQ(fault.code(), absl::StatusCode::kInternal);
  EXPECT_TRUE(IsContextLost(fault));

  // Names the driver does not know: the built-in table, then the number.
  EXPECT_THAT(driver->Check(kCudaErrorMisalignedAddress, "cuLaunchKernel").message(),
              HasSubstr("CUDA_ERROR_MISALIGNED_ADDRESS"));
  EXPECT_THAT(driver->Check(12345, "cuLaunchKernel").message(),
              HasSubstr("cuLaunchKernel failed: CUresult 12345"));
  EXPECT_FALSE(CudaResultOf(absl::InternalError("not from the driver")).has_value());
  EXPECT_FALSE(IsContextLost(absl::InternalError("not from the driver")));
}

TEST(CudaDriverTest, ModuleLoadFailureCarriesTheJitLog) {
  FakeCuda fake;
  std::unique_ptr<CudaDriver> driver = OpenFake(fake);
  absl::StatusOr<CudaModule> module = CudaModule::Load(*driver, "SYNTAX ERROR");
  ASSERT_FALSE(module.ok());
  EXPECT_EQ(module.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(module.status().message(),
              HasSubstr("cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_PTX"));
  EXPECT_THAT(module.status().message(), HasSubstr("JIT log: ptxas application ptx input"));
  EXPECT_EQ(CudaResultOf(module.status()), kCudaErrorInvalidPtx);
}

TEST(CudaDriverTest, MissingEntryIsNotFoundNamingIt) {
  FakeCuda fake;
  fake.AddKernel("present", FakeKernel{});
  std::unique_ptr<CudaDriver> driver = OpenFake(fake);
  absl::StatusOr<CudaModule> module = CudaModule::Load(*driver, FakePtx("present", 3));
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_TRUE(module->Function("present").ok());
  absl::StatusOr<CUfunction> missing = module->Function("absent");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("the PTX module has no entry \"absent\""));
}

TEST(CudaDriverTest, HandlesReleaseWhatTheyHoldOnceEvenWhenMoved) {
  FakeCuda fake;
  fake.AddKernel("k", FakeKernel{});
  std::unique_ptr<CudaDriver> driver = OpenFake(fake);
  {
    absl::StatusOr<CudaContext> context = CudaContext::Retain(*driver, 0);
    ASSERT_TRUE(context.ok()) << context.status();
    absl::StatusOr<DeviceBuffer> buffer = DeviceBuffer::Allocate(*driver, 1024);
    ASSERT_TRUE(buffer.ok()) << buffer.status();
    absl::StatusOr<CudaModule> module = CudaModule::Load(*driver, FakePtx("k", 1));
    ASSERT_TRUE(module.ok()) << module.status();
    absl::StatusOr<CudaEvent> event = CudaEvent::Create(*driver);
    ASSERT_TRUE(event.ok()) << event.status();
    EXPECT_EQ(fake.retained_contexts(), 1);
    EXPECT_EQ(fake.live_allocations(), 1);
    EXPECT_EQ(fake.live_modules(), 1);

    CudaContext moved_context = *std::move(context);
    DeviceBuffer moved_buffer = *std::move(buffer);
    moved_buffer = *std::move(buffer);  // from an emptied handle: frees the first
    EXPECT_EQ(fake.live_allocations(), 0);
    DeviceBuffer second = *DeviceBuffer::Allocate(*driver, 16);
    CudaModule moved_module = *std::move(module);
    EXPECT_EQ(fake.retained_contexts(), 1);
    EXPECT_EQ(fake.live_allocations(), 1);
    EXPECT_EQ(fake.live_modules(), 1);
  }
  EXPECT_EQ(fake.retained_contexts(), 0);
  EXPECT_EQ(fake.live_allocations(), 0);
  EXPECT_EQ(fake.live_modules(), 0);
}

TEST(CudaDriverTest, BufferCopiesRoundTripAndRefuseOversizedCopies) {
  FakeCuda fake;
  std::unique_ptr<CudaDriver> driver = OpenFake(fake);
  absl::StatusOr<DeviceBuffer> buffer = DeviceBuffer::Allocate(*driver, 4 * sizeof(float));
  ASSERT_TRUE(buffer.ok()) << buffer.status();
  const float in[4] = {1, 2, 3, 4};
  float out[4] = {};
  ASSERT_TRUE(buffer->CopyFromHost(in, sizeof(in)).ok());
  ASSERT_TRUE(buffer->CopyToHost(out, sizeof(out)).ok());
  EXPECT_EQ(out[3], 4);
  EXPECT_EQ(buffer->CopyFromHost(in, 2 * sizeof(in)).code(), absl::StatusCode::kInvalidArgument);
}

// ---- CudaEventClock

// Launches `kernel` `count` times through the driver.
void Launch(const CudaDriver& driver, CUfunction function, int count) {
  for (int i = 0; i < count; ++i) {
    ASSERT_EQ(driver.api().cuLaunchKernel(function, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr),
              kCudaSuccess);
  }
}

TEST(CudaEventClockTest, ReadingsAdvanceByTheGpuTimeBetweenThem) {
  FakeCuda fake;
  fake.AddKernel("k", FakeKernel{.duration_ms = 0.5});
  std::unique_ptr<CudaDriver> driver = OpenFake(fake);
  CudaModule module = *CudaModule::Load(*driver, FakePtx("k", 0));
  CUfunction function = *module.Function("k");
  Launch(*driver, function, 3);  // before the clock: not counted
  FakeClock host;
  absl::StatusOr<std::unique_ptr<CudaEventClock>> clock = CudaEventClock::Create(*driver, &host);
  ASSERT_TRUE(clock.ok()) << clock.status();
  const int64_t start = (*clock)->NowNanos();
  EXPECT_EQ(start, 0);
  Launch(*driver, function, 4);
  EXPECT_EQ((*clock)->NowNanos() - start, 2'000'000);
  Launch(*driver, function, 1);
  EXPECT_EQ((*clock)->NowNanos() - start, 2'500'000);
  // Sleeping is the host's business, and does not touch the GPU timeline.
  (*clock)->SleepNanos(7);
  EXPECT_EQ(host.sleeps(), std::vector<int64_t>{7});
  EXPECT_TRUE((*clock)->status().ok());
}

TEST(CudaEventClockTest, AFaultStopsTheClockAndIsKept) {
  FakeCuda fake;
  fake.AddKernel("bad", testing::FakeFaultingKernel(kCudaErrorIllegalAddress));
  std::unique_ptr<CudaDriver> driver = OpenFake(fake);
  CudaModule module = *CudaModule::Load(*driver, FakePtx("bad", 0));
  CUfunction function = *module.Function("bad");
  FakeClock host;
  std::unique_ptr<CudaEventClock> clock = *CudaEventClock::Create(*driver, &host);
  const int64_t before = clock->NowNanos();
  Launch(*driver, function, 1);
  EXPECT_EQ(clock->NowNanos(), before);
  EXPECT_TRUE(IsContextLost(clock->status()));
  EXPECT_THAT(clock->status().message(), HasSubstr("CUDA_ERROR_ILLEGAL_ADDRESS"));
}

}  // namespace
}  // namespace tunefleet
