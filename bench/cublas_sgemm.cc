// cublas_sgemm: the cuBLAS reference for tuned dense kernels on NVIDIA GPUs.
// Times cublasSgemm_v2 for the dense workload's layout (NK: C[m, n] =
// sum_k A[m, k] * B[n, k], row-major, as tuner_core/workloads/dense.h) with
// CUDA events, and prints GFLOPS, the GPU's FP32 peak and a JSON line.
//
//   bazel-bin/bench/cublas_sgemm --m 4096 --n 4096 --k 4096 [--device 0] [--json out.json]
//
// Both libraries are opened at run time, like the agent's driver: libcuda.so.1
// (kernel_runtime/cuda_driver.h) and the first cuBLAS found among
// libcublas.so.13/.12/.11/libcublas.so, then the same names under
// $CUDA_HOME/lib64 and /usr/local/cuda/lib64. No CUDA headers at build time.
//
// Method: FP32 math (CUBLAS_DEFAULT_MATH: no TF32 tensor cores, unless the
// environment sets NVIDIA_TF32_OVERRIDE=1, which is refused), inputs uniform
// in [-1, 1), a spot check of 64 elements against a double-precision dot
// product, `--warmup` untimed calls, then `--samples` samples of enough
// back-to-back calls to last >= `--min_sample_ms` each between two events;
// the reported time is the median sample's per-call time.
#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "bench/bench_report.h"
#include "bench/gpu_peak.h"
#include "kernel_runtime/cuda_driver.h"
#include "nlohmann/json.hpp"

ABSL_FLAG(int64_t, m, 4096, "rows of A and C");
ABSL_FLAG(int64_t, n, 4096, "rows of B (NK layout), columns of C");
ABSL_FLAG(int64_t, k, 4096, "reduction length");
ABSL_FLAG(int, device, 0, "CUDA device ordinal");
ABSL_FLAG(int, warmup, 5, "untimed calls first");
ABSL_FLAG(int, samples, 15, "timed samples; the median is reported");
ABSL_FLAG(double, min_sample_ms, 100, "each sample runs enough calls to last this long");
ABSL_FLAG(std::string, json, "", "also write the JSON result to this file");
ABSL_FLAG(std::string, cublas, "",
          "cuBLAS library to dlopen (default: libcublas.so.13, .12, .11, libcublas.so, then "
          "the same under $CUDA_HOME/lib64 and /usr/local/cuda/lib64)");

namespace tunefleet {
namespace {

// cublas_api.h's types and values.
using CublasHandle = struct CublasContext*;
using CublasStatus = int;
constexpr int kCublasOpN = 0;
constexpr int kCublasOpT = 1;
constexpr int kCublasDefaultMath = 0;

struct CublasApi {
  std::string path;
  CublasStatus (*create)(CublasHandle*) = nullptr;
  CublasStatus (*destroy)(CublasHandle) = nullptr;
  CublasStatus (*set_math_mode)(CublasHandle, int) = nullptr;
  CublasStatus (*get_version)(CublasHandle, int*) = nullptr;
  CublasStatus (*sgemm)(CublasHandle, int transa, int transb, int m, int n, int k,
                        const float* alpha, const float* a, int lda, const float* b, int ldb,
                        const float* beta, float* c, int ldc) = nullptr;
};

[[nodiscard]] absl::StatusOr<CublasApi> OpenCublas(const std::string& requested) {
  std::vector<std::string> candidates;
  if (!requested.empty()) {
    candidates.push_back(requested);
  } else {
    const std::vector<std::string> names = {"libcublas.so.13", "libcublas.so.12", "libcublas.so.11",
                                            "libcublas.so"};
    std::vector<std::string> dirs = {""};
    if (const char* home = std::getenv("CUDA_HOME"); home != nullptr && *home != '\0') {
      dirs.push_back(absl::StrCat(home, "/lib64/"));
    }
    dirs.push_back("/usr/local/cuda/lib64/");
    for (const std::string& dir : dirs) {
      for (const std::string& name : names) candidates.push_back(dir + name);
    }
  }
  std::vector<std::string> errors;
  for (const std::string& candidate : candidates) {
    void* library = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
      const char* error = dlerror();
      errors.push_back(error != nullptr ? error : candidate);
      continue;
    }
    CublasApi api;
    api.path = candidate;
    api.create = reinterpret_cast<decltype(api.create)>(dlsym(library, "cublasCreate_v2"));
    api.destroy = reinterpret_cast<decltype(api.destroy)>(dlsym(library, "cublasDestroy_v2"));
    api.set_math_mode =
        reinterpret_cast<decltype(api.set_math_mode)>(dlsym(library, "cublasSetMathMode"));
    api.get_version =
        reinterpret_cast<decltype(api.get_version)>(dlsym(library, "cublasGetVersion_v2"));
    api.sgemm = reinterpret_cast<decltype(api.sgemm)>(dlsym(library, "cublasSgemm_v2"));
    if (api.create == nullptr || api.destroy == nullptr || api.sgemm == nullptr ||
        api.set_math_mode == nullptr) {
      errors.push_back(absl::StrCat(candidate, " lacks cublasCreate_v2/cublasSgemm_v2"));
      continue;
    }
    return api;
  }
  return absl::NotFoundError(absl::StrCat("cannot open cuBLAS: ", absl::StrJoin(errors, "; ")));
}

[[nodiscard]] absl::Status CublasCheck(CublasStatus status, const char* call) {
  if (status == 0) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(call, " failed: cublasStatus_t ", status));
}

std::vector<float> Uniform(int64_t count, uint32_t seed) {
  std::mt19937 engine(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> values(static_cast<size_t>(count));
  for (float& value : values) value = uniform(engine);
  return values;
}

[[nodiscard]] absl::Status Run() {
  const int64_t m = absl::GetFlag(FLAGS_m), n = absl::GetFlag(FLAGS_n), k = absl::GetFlag(FLAGS_k);
  const int samples = absl::GetFlag(FLAGS_samples);
  if (m < 1 || n < 1 || k < 1 || m > (1 << 30) || n > (1 << 30) || k > (1 << 30)) {
    return absl::InvalidArgumentError("--m, --n and --k must be in [1, 2^30]");
  }
  if (samples < 1 || absl::GetFlag(FLAGS_warmup) < 0) {
    return absl::InvalidArgumentError("--samples must be >= 1 and --warmup >= 0");
  }
  if (const char* tf32 = std::getenv("NVIDIA_TF32_OVERRIDE");
      tf32 != nullptr && std::string(tf32) == "1") {
    return absl::FailedPreconditionError(
        "NVIDIA_TF32_OVERRIDE=1 would time TF32 tensor cores, not FP32: unset it");
  }

  absl::StatusOr<std::unique_ptr<CudaDriver>> driver = CudaDriver::Open();
  if (!driver.ok()) return driver.status();
  absl::StatusOr<CUdevice> device = (*driver)->Device(absl::GetFlag(FLAGS_device));
  if (!device.ok()) return device.status();
  absl::StatusOr<GpuDeviceProperties> gpu = (*driver)->Properties(*device);
  if (!gpu.ok()) return gpu.status();
  // The primary context, current on this thread: cuBLAS's runtime uses it.
  absl::StatusOr<CudaContext> context = CudaContext::Retain(**driver, *device);
  if (!context.ok()) return context.status();
  absl::StatusOr<CublasApi> cublas = OpenCublas(absl::GetFlag(FLAGS_cublas));
  if (!cublas.ok()) return cublas.status();

  const std::vector<float> a = Uniform(m * k, 1), b = Uniform(n * k, 2);
  absl::StatusOr<DeviceBuffer> a_dev = DeviceBuffer::Allocate(**driver, a.size() * 4);
  absl::StatusOr<DeviceBuffer> b_dev = DeviceBuffer::Allocate(**driver, b.size() * 4);
  absl::StatusOr<DeviceBuffer> c_dev = DeviceBuffer::Allocate(**driver, m * n * 4);
  for (const auto* buffer : {&a_dev, &b_dev, &c_dev}) {
    if (!buffer->ok()) return buffer->status();
  }
  if (absl::Status s = a_dev->CopyFromHost(a.data(), a.size() * 4); !s.ok()) return s;
  if (absl::Status s = b_dev->CopyFromHost(b.data(), b.size() * 4); !s.ok()) return s;

  CublasHandle handle = nullptr;
  if (absl::Status s = CublasCheck(cublas->create(&handle), "cublasCreate_v2"); !s.ok()) return s;
  struct HandleCloser {
    const CublasApi& api;
    CublasHandle handle;
    ~HandleCloser() { api.destroy(handle); }
  } closer{*cublas, handle};
  if (absl::Status s =
          CublasCheck(cublas->set_math_mode(handle, kCublasDefaultMath), "cublasSetMathMode");
      !s.ok()) {
    return s;
  }
  int version = 0;
  if (cublas->get_version != nullptr) cublas->get_version(handle, &version);

  // Row-major C (M x N) = A (M x K) . B (N x K)^T is, column-major, the
  // N x M matrix op(B) . op(A) with B transposed: cuBLAS sees C^T.
  const float alpha = 1.0f, beta = 0.0f;
  const float* a_ptr = reinterpret_cast<const float*>(a_dev->get());
  const float* b_ptr = reinterpret_cast<const float*>(b_dev->get());
  float* c_ptr = reinterpret_cast<float*>(c_dev->get());
  auto sgemm = [&] {
    return CublasCheck(
        cublas->sgemm(handle, kCublasOpT, kCublasOpN, static_cast<int>(n), static_cast<int>(m),
                      static_cast<int>(k), &alpha, b_ptr, static_cast<int>(k), a_ptr,
                      static_cast<int>(k), &beta, c_ptr, static_cast<int>(n)),
        "cublasSgemm_v2");
  };

  if (absl::Status s = sgemm(); !s.ok()) return s;
  if (absl::Status s = context->Synchronize(); !s.ok()) return s;
  std::vector<float> c(static_cast<size_t>(m * n));
  if (absl::Status s = c_dev->CopyToHost(c.data(), c.size() * 4); !s.ok()) return s;
  // Spot check: 64 elements against double-precision dot products, under
  // the runner's tolerance (kernel_runtime/tensor_data.h: rtol = 8 eps
  // sqrt(K), atol = rtol * max|ref|), which FP32 summation in any order
  // meets and TF32 inputs (10-bit mantissas) typically do not.
  std::mt19937 pick(3);
  struct Spot {
    int64_t i, j;
    double expected;
  };
  std::vector<Spot> spots;
  double max_abs = 0;
  for (int check = 0; check < 64; ++check) {
    Spot spot{static_cast<int64_t>(pick() % m), static_cast<int64_t>(pick() % n), 0};
    for (int64_t kk = 0; kk < k; ++kk) {
      spot.expected += static_cast<double>(a[spot.i * k + kk]) * b[spot.j * k + kk];
    }
    max_abs = std::max(max_abs, std::fabs(spot.expected));
    spots.push_back(spot);
  }
  const double rtol = 8 * 1.1920929e-7 * std::sqrt(std::max<double>(k, 64));
  double worst = 0;
  for (const Spot& spot : spots) {
    const double got = c[spot.i * n + spot.j];
    const double allowed = rtol * (max_abs + std::fabs(spot.expected));
    worst = std::max(worst, std::fabs(got - spot.expected) / allowed);
    if (!(std::fabs(got - spot.expected) <= allowed)) {
      return absl::InternalError(absl::StrFormat(
          "cuBLAS gave C[%d, %d] = %.9g, expected %.9g (tolerance %.3g): not an FP32 SGEMM of "
          "this layout",
          spot.i, spot.j, got, spot.expected, allowed));
    }
  }

  absl::StatusOr<CudaEvent> start = CudaEvent::Create(**driver);
  absl::StatusOr<CudaEvent> stop = CudaEvent::Create(**driver);
  if (!start.ok()) return start.status();
  if (!stop.ok()) return stop.status();
  // Times `calls` back-to-back calls; milliseconds per call.
  auto time_calls = [&](int calls) -> absl::StatusOr<double> {
    if (absl::Status s = start->Record(); !s.ok()) return s;
    for (int call = 0; call < calls; ++call) {
      if (absl::Status s = sgemm(); !s.ok()) return s;
    }
    if (absl::Status s = stop->Record(); !s.ok()) return s;
    if (absl::Status s = stop->Synchronize(); !s.ok()) return s;
    absl::StatusOr<float> ms = stop->MillisecondsSince(*start);
    if (!ms.ok()) return ms.status();
    return static_cast<double>(*ms) / calls;
  };
  for (int call = 0; call < absl::GetFlag(FLAGS_warmup); ++call) {
    if (absl::Status s = sgemm(); !s.ok()) return s;
  }
  absl::StatusOr<double> single = time_calls(1);
  if (!single.ok()) return single.status();
  const int calls = static_cast<int>(std::clamp(
      std::ceil(absl::GetFlag(FLAGS_min_sample_ms) / std::max(*single, 1e-3)), 1.0, 100000.0));
  std::vector<double> per_call_ms;
  for (int sample = 0; sample < samples; ++sample) {
    absl::StatusOr<double> ms = time_calls(calls);
    if (!ms.ok()) return ms.status();
    per_call_ms.push_back(*ms);
  }
  std::vector<double> sorted = per_call_ms;
  std::sort(sorted.begin(), sorted.end());
  const double median_ms = sorted[sorted.size() / 2];
  const double flops = 2.0 * m * n * k;
  const double gflops = flops / (median_ms * 1e-3) / 1e9;
  absl::StatusOr<double> peak = Fp32PeakGflops(*gpu);

  nlohmann::json result = {
      {"library", "cublas"},
      {"cublas_path", cublas->path},
      {"cublas_version", version},
      {"math_mode", "CUBLAS_DEFAULT_MATH (FP32, no TF32)"},
      {"layout", "NK"},
      {"M", m},
      {"N", n},
      {"K", k},
      {"gpu", gpu->name},
      {"compute_capability",
       absl::StrCat(gpu->compute_capability_major, ".", gpu->compute_capability_minor)},
      {"calls_per_sample", calls},
      {"samples_ms_per_call", per_call_ms},
      {"median_ms", median_ms},
      {"gflops", gflops},
      {"spot_check_worst_fraction_of_tolerance", worst},
  };
  if (peak.ok()) {
    result["fp32_peak_gflops"] = *peak;
    result["fraction_of_peak"] = gflops / *peak;
  }
  std::cout << absl::StrFormat("cuBLAS SGEMM %dx%dx%d (NK) on %s: %.3f ms, %.1f GFLOPS", m, n, k,
                               gpu->name, median_ms, gflops);
  if (peak.ok()) {
    std::cout << absl::StrFormat(" = %.1f%% of the %.0f GFLOPS FP32 peak", 100 * gflops / *peak,
                                 *peak);
  }
  std::cout << "\n" << result.dump() << "\n";
  return bench::WriteJsonReport(absl::GetFlag(FLAGS_json), result);
}

}  // namespace
}  // namespace tunefleet

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  absl::Status status = tunefleet::Run();
  if (!status.ok()) {
    std::cerr << "cublas_sgemm: " << status.message() << "\n";
    return 1;
  }
  return 0;
}
