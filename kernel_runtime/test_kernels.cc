#include "kernel_runtime/test_kernels.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "common/check.h"
#include "common/file_util.h"

namespace tunefleet {
namespace testing {

std::string RunfilePath(const std::string& workspace_relative_path) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  TF_CHECK(srcdir != nullptr);  // set by `bazel test`
  const char* workspace = std::getenv("TEST_WORKSPACE");
  return absl::StrCat(srcdir, "/", workspace != nullptr ? workspace : "tunefleet", "/",
                      workspace_relative_path);
}

std::string ReadTestKernel(const std::string& file) {
  const std::string path = RunfilePath(absl::StrCat("kernel_runtime/testdata/", file));
  absl::StatusOr<std::string> bytes = ReadFileToString(path, kMaxArtifactBytes);
  if (!bytes.ok()) {
    std::fprintf(stderr, "cannot read test kernel: %s\n", bytes.status().ToString().c_str());
    std::abort();
  }
  return *std::move(bytes);
}

proto::RunRequest DenseTestRequest(const std::string& kernel_file) {
  proto::RunRequest request;
  request.set_workload_name("dense");
  request.set_workload_args_json(kTestWorkloadArgs);
  request.set_shared_object(ReadTestKernel(kernel_file));
  request.set_entry_name(kTestEntry);
  request.set_artifact_hash(kernel_file);
  proto::MeasureOptions* options = request.mutable_options();
  options->set_number(2);
  options->set_repeat(3);
  options->set_min_repeat_ms(0);
  options->set_cooldown_interval_s(0);
  options->set_enable_cpu_cache_flush(true);
  options->set_timeout_s(30);
  options->set_check_correctness(true);
  options->set_input_seed(1);
  return request;
}

}  // namespace testing
}  // namespace tunefleet
