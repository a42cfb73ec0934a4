// What the builder's tests share to run the kernels they build in-process:
// a serial runtime that runs parallel iterations backwards (a kernel that
// depends on their order fails its check) and poisons its workspaces, and a
// loader for a built shared object.
#ifndef TUNEFLEET_TOOLCHAIN_KERNEL_TEST_UTIL_H_
#define TUNEFLEET_TOOLCHAIN_KERNEL_TEST_UTIL_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/kernel_abi.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tuner_core/space/config_space.h"
#include "tuner_core/templates/template.h"
#include "tuner_core/workloads/workload.h"

namespace tunefleet::kernel_test {

extern const TfRuntime kSerialRuntime;

// dlopen of the shared object `bytes` (through a temporary file, removed
// again), or nullptr with `*error` set. dlclose it when done.
void* LoadSharedObject(const std::string& bytes, std::string* error);

// Calls `check` on `configs` configs of template `template_name` drawn at
// random (from `seed`) for each workload of `workloads` (its args), with
// the config's index in the space (a seed for its inputs). A template,
// workload or space that cannot be made fails the test.
using ConfigCheck = std::function<void(const Template& tmpl, const Workload& workload,
                                       const Config& config, int64_t index)>;
void ForRandomConfigs(const std::string& template_name,
                      const std::vector<nlohmann::json>& workloads, int configs, uint64_t seed,
                      const ConfigCheck& check);

// Loads the shared object `bytes`, runs its `entry_name` kernel's prepare
// stage (where it has one), then its entry once, on `args` with
// kSerialRuntime, and unloads it: success, or what failed (the load, the
// entry's symbol, a non-zero return).
::testing::AssertionResult RunPrepareThenEntry(const std::string& bytes,
                                               const std::string& entry_name,
                                               std::vector<void*>& args);

// The buffer a compiled model's epilogue of `func` applies to: a staged one
// named like an output (a blocked convolution's), else the output tensor;
// its index among the staged buffers or the tensors (the other -1).
struct EpilogueOutput {
  std::string name;
  int staged_index = -1, tensor_index = -1;
};
EpilogueOutput EpilogueOutputOf(const ir::LoweredFunc& func);

// Blocked (NCHWc) convolution shapes whose kernels' outputs are written in
// every way the templates have: rows, tiles of rows cut into parts, bands of
// rows finished after the last input-channel block, chunks of input-channel
// blocks (a wide pointwise one), stride and asymmetric padding. Without K:
// the depthwise ones (C = the shape's K).
std::vector<nlohmann::json> BlockedConvShapes(bool with_k);

}  // namespace tunefleet::kernel_test

#endif  // TUNEFLEET_TOOLCHAIN_KERNEL_TEST_UTIL_H_
