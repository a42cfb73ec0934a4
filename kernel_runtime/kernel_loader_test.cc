#include "kernel_runtime/kernel_loader.h"

#include <dirent.h>

#include <string>
#include <utility>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernel_runtime/tensor_data.h"
#include "kernel_runtime/test_kernels.h"
#include "kernel_runtime/thread_pool.h"

namespace tunefleet {
namespace {

using ::testing::AnyOf;
using ::testing::HasSubstr;
using ::tunefleet::testing::kTestEntry;
using ::tunefleet::testing::ReadTestKernel;

std::unique_ptr<PreparedWorkload> TestDense() {
  auto workload = MakeWorkload("dense", {{"M", 48}, {"N", 40}, {"K", 64}});
  EXPECT_TRUE(workload.ok()) << workload.status();
  auto prepared = PreparedWorkload::Make(std::move(workload).value(), /*seed=*/1);
  EXPECT_TRUE(prepared.ok()) << prepared.status();
  return std::move(prepared).value();
}

int OpenDescriptors() {
  int count = 0;
  DIR* dir = opendir("/proc/self/fd");
  while (readdir(dir) != nullptr) ++count;
  closedir(dir);
  return count;
}

TEST(SharedObjectTest, LoadsAndRunsAKernelFromBytes) {
  auto so = SharedObject::LoadFromBytes(ReadTestKernel("libdense_ok.so"), "dense_ok");
  ASSERT_TRUE(so.ok()) << so.status();
  auto entry = so->FindKernelEntry(kTestEntry);
  ASSERT_TRUE(entry.ok()) << entry.status();

  ThreadPool pool(ThreadPoolOptions{.num_threads = 2, .pin_threads = false});
  auto dense = TestDense();
  dense->PrepareCheckRun();
  EXPECT_EQ((*entry)(dense->kernel_args(), pool.runtime()), 0);
  EXPECT_EQ(dense->FindWrongAnswer(), std::nullopt);
}

TEST(SharedObjectTest, MissingSymbolIsNotFoundNamingIt) {
  auto so =
      SharedObject::LoadFromBytes(ReadTestKernel("libdense_missing_entry.so"), "artifact-123");
  ASSERT_TRUE(so.ok()) << so.status();
  auto entry = so->FindKernelEntry(kTestEntry);
  ASSERT_FALSE(entry.ok());
  EXPECT_EQ(entry.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(entry.status().message(), HasSubstr("symbol \"dense_kernel\" not found"));
  EXPECT_THAT(entry.status().message(), HasSubstr("artifact-123"));
  EXPECT_TRUE(so->FindSymbol("some_other_kernel").ok());
}

TEST(SharedObjectTest, GarbageIsInvalidArgumentWithDlerrorText) {
  auto so = SharedObject::LoadFromBytes(std::string(4096, 'x'), "garbage");
  ASSERT_FALSE(so.ok());
  EXPECT_EQ(so.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(so.status().message(), HasSubstr("dlopen of shared object garbage (4096 bytes)"));
  EXPECT_THAT(std::string(so.status().message()),
              AnyOf(HasSubstr("invalid ELF header"), HasSubstr("file too short")));
}

TEST(SharedObjectTest, EmptyBytesAreInvalidArgument) {
  auto so = SharedObject::LoadFromBytes("", "empty");
  EXPECT_EQ(so.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(SharedObjectTest, TwoObjectsLoadedAtOnceStayDistinct) {
  // Both export dense_kernel; glibc must not hand back the first object for
  // the second load.
  auto ok = SharedObject::LoadFromBytes(ReadTestKernel("libdense_ok.so"), "ok");
  auto error = SharedObject::LoadFromBytes(ReadTestKernel("libdense_returns_error.so"), "err");
  ASSERT_TRUE(ok.ok() && error.ok());
  auto ok_entry = ok->FindKernelEntry(kTestEntry);
  auto error_entry = error->FindKernelEntry(kTestEntry);
  ASSERT_TRUE(ok_entry.ok() && error_entry.ok());
  EXPECT_NE(*ok_entry, *error_entry);
  ThreadPool pool(1);
  auto dense = TestDense();
  EXPECT_EQ((*ok_entry)(dense->kernel_args(), pool.runtime()), 0);
  EXPECT_EQ((*error_entry)(dense->kernel_args(), pool.runtime()), 7);
}

TEST(SharedObjectTest, RepeatedLoadsLeakNoDescriptors) {
  const std::string bytes = ReadTestKernel("libdense_ok.so");
  {
    // Warm up whatever the first dlopen allocates for good.
    auto so = SharedObject::LoadFromBytes(bytes, "warm-up");
    ASSERT_TRUE(so.ok());
  }
  const int before = OpenDescriptors();
  for (int i = 0; i < 200; ++i) {
    auto so = SharedObject::LoadFromBytes(bytes, "loop");
    ASSERT_TRUE(so.ok()) << so.status();
    ASSERT_TRUE(so->FindKernelEntry(kTestEntry).ok());
  }
  EXPECT_EQ(OpenDescriptors(), before);
}

TEST(SharedObjectTest, MovedFromObjectIsEmpty) {
  auto so = SharedObject::LoadFromBytes(ReadTestKernel("libdense_ok.so"), "ok");
  ASSERT_TRUE(so.ok());
  SharedObject moved = std::move(so).value();
  EXPECT_TRUE(moved.FindKernelEntry(kTestEntry).ok());
  SharedObject target = std::move(moved);
  EXPECT_EQ(moved.FindSymbol(kTestEntry).status().code(),  // NOLINT(bugprone-use-after-move)
            absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(target.FindKernelEntry(kTestEntry).ok());
}

}  // namespace
}  // namespace tunefleet
