// Tensor data for measuring and checking kernels of one workload: aligned
// buffers in kernel-argument order, seeded random inputs, NaN-poisoned
// outputs, the reference outputs (computed once), and the comparison that
// decides WRONG_ANSWER.
//
// The runner child keeps a PreparedWorkloadCache across trials, because
// every trial of a tuning task measures the same (workload, seed): buffers
// are allocated, inputs generated and the (slow, naive) reference computed
// once per task, not once per trial.
//
//   PreparedWorkloadCache cache(/*capacity=*/4);
//   TF_ASSIGN_OR_RETURN(PreparedWorkload* prepared, cache.Get("dense", args_json, seed));
//   prepared->PrepareCheckRun();
//   entry(prepared->kernel_args(), runtime);
//   if (std::optional<std::string> wrong = prepared->FindWrongAnswer()) ...
//
// Tolerance. Outputs are sums of ReductionLength() (= K) fp32 products; a
// kernel may legitimately sum them in any order (tiles, FMA, vector lanes),
// and each order rounds differently. Rounding errors of a K-term sum behave
// like a random walk of ~sqrt(K) steps of about one unit roundoff of the
// running sum, whose size is at most the output's scale, max|ref|. So an
// element passes when
//     |out - ref| <= atol + rtol * |ref|,
//     rtol = 8 * FLT_EPSILON * sqrt(max(K, 64)),  atol = rtol * max|ref|.
// That is ~30x above the errors of plain sequential fp32 summation (about
// eps * sqrt(K) * max|ref| / 4; blocked orders do better), and far below
// what a real bug costs: one dropped or doubled product of inputs in [-1, 1]
// moves an element by ~0.25 on average, while for K = 1024 (max|ref| ~ 50)
// the bound is ~1.5e-3. Measured: on 64x64 outputs, the worst element of
// sequential fp32 sums uses 2-3% of the bound for every K from 64 to 16384,
// and 8-lane FMA sums under 1%.
// The max(K, 64) floor leaves a few ulps of slack for tiny K. NaN (and a
// NaN/Inf difference) never passes.
#ifndef TUNEFLEET_KERNEL_RUNTIME_TENSOR_DATA_H_
#define TUNEFLEET_KERNEL_RUNTIME_TENSOR_DATA_H_

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "target/host.h"
#include "tuner_core/workloads/workload.h"

namespace tunefleet {

// Fills data[0, count) with values uniform in [-1, 1) (multiples of 2^-23, so
// exact in fp32), a pure function of (seed, stream, index): the same inputs
// on every machine and in every process. `stream` separates tensors sharing
// a seed. SplitMix64 per element: a few ns per value, unlike
// std::uniform_real_distribution.
void FillUniform(float* data, int64_t count, uint64_t seed, uint64_t stream);

struct Tolerance {
  double atol = 0;
  double rtol = 0;
};

// The tolerance described in the header comment.
Tolerance ToleranceFor(int64_t reduction_length, double max_abs_reference);

// Compares `actual` with `expected` (both `tensor.NumElements()` long) under
// `tolerance`. Empty when all match; otherwise names the tensor, the first
// mismatching element (flat index and multi-index), both values, the
// tolerance, how many elements mismatch and the largest difference.
std::optional<std::string> CompareTensor(const TensorArg& tensor, const float* actual,
                                         const float* expected, const Tolerance& tolerance);

// A float array on a 64-byte boundary (cache line, and AVX-512 friendly).
using AlignedFloats = std::unique_ptr<float[], decltype(&std::free)>;
// ResourceExhausted naming `what` and the size when memory is short.
[[nodiscard]] absl::StatusOr<AlignedFloats> AllocateAlignedFloats(int64_t count,
                                                                  const std::string& what);

// One workload's buffers, inputs and reference for one input seed. Not
// thread-safe: owned by the one thread that runs kernels.
class PreparedWorkload {
 public:
  // Allocates every buffer and fills the inputs. ResourceExhausted when
  // memory is short.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<PreparedWorkload>> Make(
      std::unique_ptr<Workload> workload, uint64_t seed);

  const Workload& workload() const { return *workload_; }
  uint64_t seed() const { return seed_; }

  // One pointer per tensor, in Workload::tensors() order: what a kernel
  // entry takes as `args`. Valid for this object's lifetime.
  void** kernel_args() { return kernel_args_.data(); }
  float* buffer(size_t tensor_index) { return buffers_[tensor_index].get(); }

  // Puts back inputs that an earlier kernel overwrote, so one bad kernel
  // cannot skew the timings or checks of the next. Cheap when untouched.
  void RestoreInputs();
  // RestoreInputs, then fill every output with NaN, so that a kernel that
  // writes nothing (or skips a tile) fails the check.
  void PrepareCheckRun();
  // Computes the reference outputs unless done already. Slow (naive loops),
  // so the runner calls it while preparing, outside the kernel's timeout;
  // FindWrongAnswer calls it too.
  void ComputeReferenceIfNeeded();
  // After a check run: why the outputs are wrong (see CompareTensor), or
  // that the kernel wrote into an input; empty when correct.
  std::optional<std::string> FindWrongAnswer();

  // What the cache flush before each timing repeat evicts of the inputs:
  // every input buffer but the first (AutoTVM's
  // cache_flush_cpu_non_first_arg). In a model the first input is the
  // activation the previous layer has just written, still in the caches,
  // while the weights come from memory.
  std::vector<CacheFlushRange> FlushedInputRanges() const;
  // What it holds: two buffers per tensor (the kernel's, and the pristine
  // input or the reference output).
  int64_t bytes() const { return BytesFor(*workload_); }
  static int64_t BytesFor(const Workload& workload);

 private:
  PreparedWorkload(std::unique_ptr<Workload> workload, uint64_t seed)
      : workload_(std::move(workload)), seed_(seed) {}

  std::unique_ptr<Workload> workload_;
  uint64_t seed_;
  std::vector<AlignedFloats> buffers_;          // per tensor
  std::vector<void*> kernel_args_;              // buffers_ as the ABI wants them
  std::vector<AlignedFloats> pristine_inputs_;  // per input tensor
  std::vector<AlignedFloats> reference_;        // per tensor; empty for inputs
  bool reference_ready_ = false;
};

// The PreparedWorkloads used last, by (workload name, canonical args,
// seed), at most `capacity` of them and `max_bytes` in all (the entry in use
// is kept whatever its size); least recently used evicted first. A model
// job's tasks take turns on an agent, so the cache holds a model's layers:
// their references (naive loops) are computed once, not on every turn. Not
// thread-safe.
class PreparedWorkloadCache {
 public:
  static constexpr size_t kDefaultCapacity = 64;
  static constexpr int64_t kDefaultMaxBytes = int64_t{256} << 20;
  // What one measurement's tensors may take (two buffers per tensor,
  // BytesFor): beyond it Get refuses before allocating, with or without the
  // sandbox's memory limit. Room for the largest layers of the zoo (VGG's
  // 25088 x 4096 dense: 0.8 GiB).
  static constexpr int64_t kMaxWorkloadBytes = int64_t{3} << 30;

  explicit PreparedWorkloadCache(size_t capacity = kDefaultCapacity,
                                 int64_t max_bytes = kDefaultMaxBytes);

  // Makes the workload from (name, args_json) and returns its prepared data,
  // building it on a miss. The pointer stays valid until a later Get evicts
  // it (capacity misses later at the earliest). InvalidArgument for a bad
  // name or args (MakeWorkload's message) or tensors over
  // kMaxWorkloadBytes, ResourceExhausted when memory is short.
  [[nodiscard]] absl::StatusOr<PreparedWorkload*> Get(const std::string& name,
                                                      const std::string& args_json, uint64_t seed);

  size_t size() const { return entries_.size(); }
  int64_t bytes() const;

 private:
  size_t capacity_;
  int64_t max_bytes_;
  // Most recently used first. A handful of entries: a linear scan is fine.
  std::vector<std::pair<std::string, std::unique_ptr<PreparedWorkload>>> entries_;
};

}  // namespace tunefleet

#endif  // TUNEFLEET_KERNEL_RUNTIME_TENSOR_DATA_H_
