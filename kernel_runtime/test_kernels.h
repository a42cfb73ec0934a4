// Test-only helpers: locate files in the test's Bazel runfiles and build
// RunRequests for the kernels in testdata/ (dense 48x40x64, layout NK, entry
// "dense_kernel"; see testdata/dense_kernel_common.h).
#ifndef TUNEFLEET_KERNEL_RUNTIME_TEST_KERNELS_H_
#define TUNEFLEET_KERNEL_RUNTIME_TEST_KERNELS_H_

#include <string>

#include "proto/runner.pb.h"

namespace tunefleet {
namespace testing {

inline constexpr char kTestEntry[] = "dense_kernel";
inline constexpr char kTestWorkloadArgs[] = R"({"M": 48, "N": 40, "K": 64, "layout": "NK"})";

// $TEST_SRCDIR/tunefleet/<workspace_relative_path>. Aborts outside a test.
std::string RunfilePath(const std::string& workspace_relative_path);
// The bytes of kernel_runtime/testdata/<file>; aborts (test bug) if missing.
std::string ReadTestKernel(const std::string& file);

// A request for kernel_runtime/testdata/<kernel_file>, with small, fast
// options: number 2, repeat 3, no cooldown, timeout 30 s, checking on.
proto::RunRequest DenseTestRequest(const std::string& kernel_file);

}  // namespace testing
}  // namespace tunefleet

#endif  // TUNEFLEET_KERNEL_RUNTIME_TEST_KERNELS_H_
