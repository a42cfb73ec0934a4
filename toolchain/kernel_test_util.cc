#include "toolchain/kernel_test_util.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <random>

#include "gtest/gtest.h"

namespace tunefleet::kernel_test {
namespace {

void SerialParallelFor(void*, int64_t n, TfParallelBody body, void* closure) {
  for (int64_t i = n - 1; i >= 0; --i) body(i, closure);
}
void* AllocWorkspace(void*, int64_t bytes) {
  void* p = nullptr;
  // Poison the workspace so padding that is read but never written shows.
  if (posix_memalign(&p, 64, static_cast<size_t>(bytes)) != 0) return nullptr;
  std::memset(p, 0x7f, static_cast<size_t>(bytes));
  return p;
}
void FreeWorkspace(void*, void* p) { std::free(p); }

}  // namespace

const TfRuntime kSerialRuntime = {
    TF_KERNEL_ABI_VERSION, 1, nullptr, SerialParallelFor, AllocWorkspace, FreeWorkspace};

void* LoadSharedObject(const std::string& bytes, std::string* error) {
  char path[] = "/tmp/tunefleet_kernel_test_XXXXXX.so";
  const int fd = mkstemps(path, 3);
  if (fd < 0) {
    *error = "mkstemps failed";
    return nullptr;
  }
  const bool written = write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size());
  close(fd);
  void* handle = written ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : nullptr;
  unlink(path);
  if (handle == nullptr) *error = written ? dlerror() : "write failed";
  return handle;
}

::testing::AssertionResult RunPrepareThenEntry(const std::string& bytes,
                                               const std::string& entry_name,
                                               std::vector<void*>& args) {
  std::string load_error;
  void* handle = LoadSharedObject(bytes, &load_error);
  if (handle == nullptr) return ::testing::AssertionFailure() << "cannot load: " << load_error;
  auto entry = reinterpret_cast<TfKernelEntry>(dlsym(handle, entry_name.c_str()));
  auto prepare = reinterpret_cast<TfKernelEntry>(
      dlsym(handle, (entry_name + TF_KERNEL_PREPARE_SUFFIX).c_str()));
  if (entry == nullptr) {
    dlclose(handle);
    return ::testing::AssertionFailure() << "missing entry " << entry_name;
  }
  int32_t rc = prepare != nullptr ? prepare(args.data(), &kSerialRuntime) : 0;
  if (rc == 0) rc = entry(args.data(), &kSerialRuntime);
  dlclose(handle);
  if (rc != 0) return ::testing::AssertionFailure() << "kernel returned " << rc;
  return ::testing::AssertionSuccess();
}

EpilogueOutput EpilogueOutputOf(const ir::LoweredFunc& func) {
  EpilogueOutput o;
  for (size_t i = 0; i < func.staged.size(); ++i) {
    if (func.staged[i].name.rfind("out", 0) == 0) {
      o.name = func.staged[i].name;
      o.staged_index = static_cast<int>(i);
    }
  }
  for (size_t i = 0; i < func.args.size() && o.name.empty(); ++i) {
    if (func.args[i].is_output) {
      o.name = func.args[i].name;
      o.tensor_index = static_cast<int>(i);
    }
  }
  return o;
}

void ForRandomConfigs(const std::string& template_name,
                      const std::vector<nlohmann::json>& workloads, int configs, uint64_t seed,
                      const ConfigCheck& check) {
  auto tmpl = FindTemplate(template_name);
  ASSERT_TRUE(tmpl.ok()) << tmpl.status();
  std::mt19937_64 rng(seed);
  for (const nlohmann::json& args : workloads) {
    auto workload = MakeWorkload((*tmpl)->workload_name(), args);
    ASSERT_TRUE(workload.ok()) << workload.status();
    auto space = (*tmpl)->DefineSpace(**workload);
    ASSERT_TRUE(space.ok()) << space.status();
    for (int c = 0; c < configs; ++c) {
      const int64_t index = std::uniform_int_distribution<int64_t>(0, space->size() - 1)(rng);
      auto config = space->Get(index);
      ASSERT_TRUE(config.ok()) << config.status();
      check(**tmpl, **workload, *config, index);
    }
  }
}

std::vector<nlohmann::json> BlockedConvShapes(bool with_k) {
  std::vector<nlohmann::json> shapes = {
      {{"N", 1}, {"C", 16}, {"H", 13}, {"W", 11}, {"K", 32}, {"R", 3}, {"S", 3}, {"padding", 1}},
      {{"N", 2},
       {"C", 8},
       {"H", 15},
       {"W", 17},
       {"K", 24},
       {"R", 3},
       {"S", 3},
       {"stride", 2},
       {"padding", {1, 0, 2, 1}}},
      {{"N", 1}, {"C", 48}, {"H", 7}, {"W", 7}, {"K", 40}, {"R", 1}, {"S", 1}},
      {{"N", 1}, {"C", 64}, {"H", 2}, {"W", 3}, {"K", 16}, {"R", 1}, {"S", 1}},
      {{"N", 1}, {"C", 128}, {"H", 6}, {"W", 5}, {"K", 64}, {"R", 1}, {"S", 1}},
  };
  for (nlohmann::json& shape : shapes) {
    shape["layout"] = "NCHWc";
    if (!with_k) {
      shape["C"] = shape["K"];
      shape.erase("K");
    }
  }
  return shapes;
}

}  // namespace tunefleet::kernel_test
