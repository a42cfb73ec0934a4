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

}  // namespace tunefleet::kernel_test
