#include "kernel_runtime/tensor_data.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "nlohmann/json.hpp"

namespace tunefleet {
namespace {

uint64_t SplitMix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// "[2, 3]" for flat index 11 of shape [4, 4].
std::string MultiIndex(const std::vector<int64_t>& shape, int64_t flat) {
  std::vector<int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = shape[d] > 0 ? flat % shape[d] : 0;
    flat = shape[d] > 0 ? flat / shape[d] : 0;
  }
  return absl::StrCat("[", absl::StrJoin(index, ", "), "]");
}

std::string ShapeText(const std::vector<int64_t>& shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ", "), "]");
}

size_t Bytes(const TensorArg& tensor) {
  return static_cast<size_t>(tensor.NumElements()) * sizeof(float);
}

}  // namespace

void FillUniform(float* data, int64_t count, uint64_t seed, uint64_t stream) {
  const uint64_t base = SplitMix64(seed ^ SplitMix64(stream));
  for (int64_t i = 0; i < count; ++i) {
    // The top 24 bits of the hash, scaled to [0, 2): exact in fp32.
    const uint64_t bits = SplitMix64(base + static_cast<uint64_t>(i)) >> 40;
    data[i] = static_cast<float>(bits) * (1.0f / (1 << 23)) - 1.0f;
  }
}

Tolerance ToleranceFor(int64_t reduction_length, double max_abs_reference) {
  const double growth = std::sqrt(static_cast<double>(std::max<int64_t>(reduction_length, 64)));
  Tolerance tolerance;
  tolerance.rtol = 8.0 * FLT_EPSILON * growth;
  tolerance.atol = tolerance.rtol * max_abs_reference;
  return tolerance;
}

std::optional<std::string> CompareTensor(const TensorArg& tensor, const float* actual,
                                         const float* expected, const Tolerance& tolerance) {
  const int64_t count = tensor.NumElements();
  int64_t mismatches = 0;
  int64_t nan_mismatches = 0;
  int64_t first = -1;
  double max_diff = 0.0;
  for (int64_t i = 0; i < count; ++i) {
    const double diff = std::fabs(static_cast<double>(actual[i]) - expected[i]);
    const double allowed = tolerance.atol + tolerance.rtol * std::fabs(expected[i]);
    // Written so that NaN (in actual, or Inf - Inf) fails.
    if (!(diff <= allowed)) {
      if (first < 0) first = i;
      ++mismatches;
      if (std::isnan(diff)) {
        ++nan_mismatches;
      } else {
        max_diff = std::max(max_diff, diff);
      }
    }
  }
  if (mismatches == 0) return std::nullopt;
  const double first_allowed = tolerance.atol + tolerance.rtol * std::fabs(expected[first]);
  return absl::StrFormat(
      "output %s %s mismatches the reference at index %d %s: got %.9g, expected %.9g "
      "(|diff| %.3g > tolerance %.3g = atol %.3g + rtol %.3g * |expected|); %d of %d "
      "elements mismatch (%d of them NaN), max non-NaN |diff| %.3g",
      tensor.name, ShapeText(tensor.shape), first, MultiIndex(tensor.shape, first), actual[first],
      expected[first], std::fabs(static_cast<double>(actual[first]) - expected[first]),
      first_allowed, tolerance.atol, tolerance.rtol, mismatches, count, nan_mismatches, max_diff);
}

[[nodiscard]] absl::StatusOr<AlignedFloats> AllocateAlignedFloats(int64_t count,
                                                                  const std::string& what) {
  if (count < 0 || static_cast<uint64_t>(count) > std::numeric_limits<size_t>::max() / 8) {
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot allocate ", what, ": ", count, " floats is not a valid size"));
  }
  void* ptr = nullptr;
  const size_t bytes = std::max<size_t>(static_cast<size_t>(count) * sizeof(float), 64);
  if (posix_memalign(&ptr, 64, bytes) != 0) {
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot allocate ", what, ": ", bytes, " bytes"));
  }
  return AlignedFloats(static_cast<float*>(ptr), &std::free);
}

absl::StatusOr<std::unique_ptr<PreparedWorkload>> PreparedWorkload::Make(
    std::unique_ptr<Workload> workload, uint64_t seed) {
  std::unique_ptr<PreparedWorkload> prepared(new PreparedWorkload(std::move(workload), seed));
  const std::vector<TensorArg>& tensors = prepared->workload_->tensors();
  for (size_t t = 0; t < tensors.size(); ++t) {
    const TensorArg& tensor = tensors[t];
    const std::string what = absl::StrCat("tensor ", tensor.name, " ", ShapeText(tensor.shape),
                                          " of ", prepared->workload_->Describe());
    absl::StatusOr<AlignedFloats> buffer = AllocateAlignedFloats(tensor.NumElements(), what);
    if (!buffer.ok()) return buffer.status();
    if (!tensor.is_output) {
      FillUniform(buffer->get(), tensor.NumElements(), seed, /*stream=*/t);
      absl::StatusOr<AlignedFloats> pristine =
          AllocateAlignedFloats(tensor.NumElements(), absl::StrCat("a copy of ", what));
      if (!pristine.ok()) return pristine.status();
      std::memcpy(pristine->get(), buffer->get(), Bytes(tensor));
      prepared->pristine_inputs_.push_back(std::move(pristine).value());
      prepared->reference_.push_back(AlignedFloats(nullptr, &std::free));
    } else {
      absl::StatusOr<AlignedFloats> reference =
          AllocateAlignedFloats(tensor.NumElements(), absl::StrCat("the reference of ", what));
      if (!reference.ok()) return reference.status();
      prepared->reference_.push_back(std::move(reference).value());
      prepared->pristine_inputs_.push_back(AlignedFloats(nullptr, &std::free));
    }
    prepared->kernel_args_.push_back(buffer->get());
    prepared->buffers_.push_back(std::move(buffer).value());
  }
  return prepared;
}

void PreparedWorkload::RestoreInputs() {
  const std::vector<TensorArg>& tensors = workload_->tensors();
  for (size_t t = 0; t < tensors.size(); ++t) {
    if (tensors[t].is_output) continue;
    if (std::memcmp(buffers_[t].get(), pristine_inputs_[t].get(), Bytes(tensors[t])) != 0) {
      std::memcpy(buffers_[t].get(), pristine_inputs_[t].get(), Bytes(tensors[t]));
    }
  }
}

void PreparedWorkload::PrepareCheckRun() {
  RestoreInputs();
  const std::vector<TensorArg>& tensors = workload_->tensors();
  for (size_t t = 0; t < tensors.size(); ++t) {
    if (!tensors[t].is_output) continue;
    std::fill_n(buffers_[t].get(), tensors[t].NumElements(),
                std::numeric_limits<float>::quiet_NaN());
  }
}

void PreparedWorkload::ComputeReferenceIfNeeded() {
  if (reference_ready_) return;
  // The reference reads the pristine inputs and writes the reference
  // buffers, so it never disturbs the kernel's buffers.
  std::vector<float*> buffers;
  const std::vector<TensorArg>& tensors = workload_->tensors();
  for (size_t t = 0; t < tensors.size(); ++t) {
    buffers.push_back(tensors[t].is_output ? reference_[t].get() : pristine_inputs_[t].get());
  }
  workload_->ComputeReference(buffers);
  reference_ready_ = true;
}

std::optional<std::string> PreparedWorkload::FindWrongAnswer() {
  const std::vector<TensorArg>& tensors = workload_->tensors();
  for (size_t t = 0; t < tensors.size(); ++t) {
    if (tensors[t].is_output) continue;
    const float* now = buffers_[t].get();
    const float* before = pristine_inputs_[t].get();
    for (int64_t i = 0; i < tensors[t].NumElements(); ++i) {
      // Bitwise: a kernel must not write its inputs at all.
      if (std::memcmp(&now[i], &before[i], sizeof(float)) != 0) {
        return absl::StrFormat("kernel wrote into input %s %s at index %d %s (was %.9g, now %.9g)",
                               tensors[t].name, ShapeText(tensors[t].shape), i,
                               MultiIndex(tensors[t].shape, i), before[i], now[i]);
      }
    }
  }
  ComputeReferenceIfNeeded();
  for (size_t t = 0; t < tensors.size(); ++t) {
    if (!tensors[t].is_output) continue;
    const float* reference = reference_[t].get();
    double max_abs_reference = 0.0;
    for (int64_t i = 0; i < tensors[t].NumElements(); ++i) {
      max_abs_reference = std::max(max_abs_reference, std::fabs(static_cast<double>(reference[i])));
    }
    const Tolerance tolerance = ToleranceFor(workload_->ReductionLength(), max_abs_reference);
    if (std::optional<std::string> mismatch =
            CompareTensor(tensors[t], buffers_[t].get(), reference, tolerance)) {
      return mismatch;
    }
  }
  return std::nullopt;
}

std::vector<CacheFlushRange> PreparedWorkload::FlushedInputRanges() const {
  std::vector<CacheFlushRange> ranges;
  const std::vector<TensorArg>& tensors = workload_->tensors();
  bool first = true;
  for (size_t t = 0; t < tensors.size(); ++t) {
    if (tensors[t].is_output) continue;
    if (!first) ranges.push_back({buffers_[t].get(), Bytes(tensors[t])});
    first = false;
  }
  return ranges;
}

int64_t PreparedWorkload::BytesFor(const Workload& workload) {
  // Saturated: a crafted shape must not wrap to a small size.
  int64_t bytes = 0;
  for (const TensorArg& tensor : workload.tensors()) {
    int64_t tensor_bytes = 0;
    if (__builtin_mul_overflow(tensor.NumElements(), int64_t{2 * sizeof(float)}, &tensor_bytes) ||
        __builtin_add_overflow(bytes, tensor_bytes, &bytes)) {
      return std::numeric_limits<int64_t>::max();
    }
  }
  return bytes;
}

PreparedWorkloadCache::PreparedWorkloadCache(size_t capacity, int64_t max_bytes)
    : capacity_(std::max<size_t>(capacity, 1)), max_bytes_(std::max<int64_t>(max_bytes, 0)) {}

int64_t PreparedWorkloadCache::bytes() const {
  int64_t total = 0;
  for (const auto& entry : entries_) total += entry.second->bytes();
  return total;
}

absl::StatusOr<PreparedWorkload*> PreparedWorkloadCache::Get(const std::string& name,
                                                             const std::string& args_json,
                                                             uint64_t seed) {
  nlohmann::json args = nlohmann::json::parse(args_json, /*cb=*/nullptr,
                                              /*allow_exceptions=*/false);
  if (args.is_discarded()) {
    return absl::InvalidArgumentError(
        absl::StrCat("workload ", name, ": arguments are not valid JSON: ", args_json));
  }
  absl::StatusOr<std::unique_ptr<Workload>> workload = MakeWorkload(name, args);
  if (!workload.ok()) return workload.status();
  // The workload's canonical args (every key present), so that {"M": 4, ...}
  // with and without a default layout share one entry.
  const std::string key = absl::StrCat(name, "|", (*workload)->args().dump(), "|", seed);

  for (size_t i = 0; i < entries_.size(); ++i) {
    if (entries_[i].first == key) {
      std::rotate(entries_.begin(), entries_.begin() + i, entries_.begin() + i + 1);
      return entries_.front().second.get();
    }
  }
  // One cap on a measurement's tensors, sandbox or not: checked before a
  // byte is allocated.
  const int64_t needed = PreparedWorkload::BytesFor(**workload);
  if (needed > kMaxWorkloadBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("workload ", (*workload)->Describe(), " needs ", needed,
                     " bytes of tensors (inputs, outputs and their copies), over this agent's "
                     "cap of ",
                     kMaxWorkloadBytes, " bytes per measurement"));
  }
  // Evict before allocating: the new entry may need the memory.
  while (!entries_.empty() && (entries_.size() >= capacity_ || bytes() + needed > max_bytes_)) {
    entries_.pop_back();
  }
  absl::StatusOr<std::unique_ptr<PreparedWorkload>> prepared =
      PreparedWorkload::Make(std::move(workload).value(), seed);
  if (!prepared.ok()) return prepared.status();
  entries_.insert(entries_.begin(), {key, std::move(prepared).value()});
  return entries_.front().second.get();
}

}  // namespace tunefleet
