// A workload is one tensor operator at fixed shapes: its name, its tensor
// arguments (inputs first, then outputs), its FLOP count and a naive
// reference implementation used to check candidate kernels.
//
// Workloads are made from (name, args) through MakeWorkload(), so the same
// description travels in records, build requests and measure requests:
//
//   auto dense = MakeWorkload("dense", {{"M", 1024}, {"N", 1024}, {"K", 1024}});
//
// The args object is JSON; each workload documents the keys it takes and
// rejects unknown keys and out-of-range values with InvalidArgument.
#ifndef TUNEFLEET_TUNER_CORE_WORKLOADS_WORKLOAD_H_
#define TUNEFLEET_TUNER_CORE_WORKLOADS_WORKLOAD_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace tunefleet {

struct TensorArg {
  std::string name;            // e.g. "A"
  std::vector<int64_t> shape;  // row-major
  bool is_output = false;

  int64_t NumElements() const;
};

class Workload {
 public:
  virtual ~Workload() = default;

  // Operator name, e.g. "dense".
  virtual const std::string& name() const = 0;
  // The arguments this workload was made from (canonical: every key present).
  virtual const nlohmann::json& args() const = 0;
  // Tensors in kernel-argument order: inputs, then outputs. All fp32.
  virtual const std::vector<TensorArg>& tensors() const = 0;
  // Floating-point operations of one run (a multiply-add counts as 2).
  virtual double flops() const = 0;
  // Computes the outputs from the inputs with straightforward loops.
  // `buffers` follows tensors() order; only outputs are written.
  virtual void ComputeReference(const std::vector<float*>& buffers) const = 0;
  // Number of terms summed into each output element: sets the tolerance of
  // the correctness check (fp32 error grows with the accumulation length).
  virtual int64_t ReductionLength() const = 0;

  // "dense(M=1024,N=1024,K=1024,layout=NK)": for logs and progress lines.
  std::string Describe() const;
};

// `workload` as the concrete workload W (registered as `name`), for the
// From() of each workload; InvalidArgument naming `user` when it is not one.
template <typename W>
[[nodiscard]] absl::StatusOr<const W*> WorkloadAs(const Workload& workload, absl::string_view user,
                                                  absl::string_view name) {
  const auto* as_w = dynamic_cast<const W*>(&workload);
  if (as_w == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(user, ": workload ", workload.name(), " is not ", name));
  }
  return as_w;
}

// A registered workload: its name, how one is made from its args, and the
// keys a shape string gives, in order ("M,N,K" for dense; empty: its args
// come as JSON only). The one table of them is in workload.cc: a new
// workload is its own files and one line there.
struct WorkloadKind {
  std::string name;
  absl::StatusOr<std::unique_ptr<Workload>> (*make)(const nlohmann::json& args);
  std::vector<std::string> shape_keys;
};

// Every registered workload, sorted by name.
const std::vector<WorkloadKind>& WorkloadKinds();

// Makes a registered workload. InvalidArgument names the problem for an
// unknown name, a missing/unknown key or a bad value.
[[nodiscard]] absl::StatusOr<std::unique_ptr<Workload>> MakeWorkload(const std::string& name,
                                                                     const nlohmann::json& args);

// Names of every registered workload, sorted.
std::vector<std::string> WorkloadNames();

// The args of `workload` from a shape string ("1024,1024,1024": its
// WorkloadKind::shape_keys, in order) and a layout, as the CLI's --shape
// and --layout give them. InvalidArgument naming what is wrong: an unknown
// workload, one whose args come as JSON only (--args), a count or a number
// that does not fit its keys.
[[nodiscard]] absl::StatusOr<nlohmann::json> WorkloadArgsFromShape(const std::string& workload,
                                                                   const std::string& shape,
                                                                   const std::string& layout);

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_WORKLOADS_WORKLOAD_H_
