#include "tuner_core/records/tvm_workload.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "tuner_core/workloads/workload.h"

namespace tunefleet {
namespace {

// How a task's arguments are laid out, one entry per TVM signature.
enum class TvmSignature {
  kDense,        // data, weight, bias, out_dtype
  kBatchMatmul,  // A, B, out_shape, out_dtype, transpose_a, transpose_b
  kConvNchwc,    // data, kernel, strides, padding, dilation, layout, out_layout, out_dtype
  kConvNchw,     // data, kernel, strides, padding, dilation, out_dtype
};

struct TvmTask {
  const char* task_name;
  const char* workload_name;
  TvmSignature signature;
};

constexpr std::array<TvmTask, 12> kTvmTasks = {{
    {"batch_matmul.cuda", "batch_matmul", TvmSignature::kBatchMatmul},
    {"batch_matmul.x86", "batch_matmul", TvmSignature::kBatchMatmul},
    {"conv2d_NCHWc.x86", "conv2d_nchw", TvmSignature::kConvNchwc},
    {"conv2d_nchw.cuda", "conv2d_nchw", TvmSignature::kConvNchw},
    {"conv2d_nchw_spatial_pack.arm_cpu", "conv2d_nchw", TvmSignature::kConvNchw},
    {"dense_large_batch.gpu", "dense", TvmSignature::kDense},
    {"dense_nopack.x86", "dense", TvmSignature::kDense},
    {"dense_pack.x86", "dense", TvmSignature::kDense},
    {"dense_small_batch.gpu", "dense", TvmSignature::kDense},
    {"depthwise_conv2d_NCHWc.x86", "depthwise_conv2d_nchw", TvmSignature::kConvNchwc},
    {"depthwise_conv2d_nchw.arm_cpu", "depthwise_conv2d_nchw", TvmSignature::kConvNchw},
    {"depthwise_conv2d_nchw.cuda", "depthwise_conv2d_nchw", TvmSignature::kConvNchw},
}};

[[nodiscard]] absl::Status ArgError(const std::string& task, const std::string& what,
                                    const std::string& problem) {
  return absl::InvalidArgumentError(absl::StrCat(task, " argument ", what, ": ", problem));
}

// ["TENSOR", [d0, d1, ...], "float32"] of the given rank.
[[nodiscard]] absl::StatusOr<std::vector<int64_t>> ReadTensor(const std::string& task,
                                                              const std::string& what,
                                                              const nlohmann::json& arg,
                                                              size_t rank) {
  if (!arg.is_array() || arg.size() != 3 || arg[0] != "TENSOR" || !arg[1].is_array() ||
      !arg[2].is_string()) {
    return ArgError(task, what,
                    absl::StrCat("expected [\"TENSOR\", shape, dtype], got ", arg.dump()));
  }
  std::vector<int64_t> shape;
  for (const nlohmann::json& dim : arg[1]) {
    // A symbolic dimension (e.g. "any_dim") is serialised as a string.
    if (!dim.is_number_integer() || dim.get<int64_t>() < 1) {
      return ArgError(task, what,
                      absl::StrCat("shape ", arg[1].dump(), " is not all positive integers"));
    }
    shape.push_back(dim.get<int64_t>());
  }
  if (shape.size() != rank) {
    return ArgError(task, what,
                    absl::StrCat("expected a ", rank, "-D tensor, got shape ", arg[1].dump()));
  }
  const std::string dtype = arg[2].get<std::string>();
  if (dtype != "float32") {
    return ArgError(task, what,
                    absl::StrCat("dtype ", dtype,
                                 " is not supported (TuneFleet's workloads are "
                                 "float32)"));
  }
  return shape;
}

// out_dtype: null, "" (TVM's "same as the input") or "float32".
[[nodiscard]] absl::Status CheckOutDtype(const std::string& task, const nlohmann::json& arg) {
  if (arg.is_null() || arg == "" || arg == "float32") return absl::OkStatus();
  return ArgError(
      task, "out_dtype",
      absl::StrCat(arg.dump(), " is not supported (TuneFleet's workloads are float32)"));
}

// An integer, or a list of 1, 2 or 4 integers (`sizes` says which), >= min.
[[nodiscard]] absl::StatusOr<std::vector<int64_t>> ReadInts(const std::string& task,
                                                            const std::string& what,
                                                            const nlohmann::json& arg,
                                                            const std::vector<size_t>& sizes,
                                                            int64_t min) {
  std::vector<int64_t> values;
  if (arg.is_number_integer()) {
    values.push_back(arg.get<int64_t>());
  } else if (arg.is_array()) {
    for (const nlohmann::json& item : arg) {
      if (!item.is_number_integer()) {
        return ArgError(task, what, absl::StrCat("expected integers, got ", arg.dump()));
      }
      values.push_back(item.get<int64_t>());
    }
  } else {
    return ArgError(task, what, absl::StrCat("expected an integer or a list, got ", arg.dump()));
  }
  if (std::find(sizes.begin(), sizes.end(), values.size()) == sizes.end()) {
    return ArgError(
        task, what,
        absl::StrCat("expected ", absl::StrJoin(sizes, " or "), " values, got ", arg.dump()));
  }
  for (int64_t v : values) {
    if (v < min) return ArgError(task, what, absl::StrCat(arg.dump(), " has a value below ", min));
  }
  return values;
}

// Arguments past the end of the list read as TVM's defaults (null).
const nlohmann::json& ArgOrNull(const nlohmann::json& args, size_t i) {
  static const nlohmann::json* const kNull = new nlohmann::json(nullptr);
  return i < args.size() ? args[i] : *kNull;
}

[[nodiscard]] absl::Status CheckArgCount(const std::string& task, const nlohmann::json& args,
                                         size_t min, size_t max) {
  if (args.size() < min || args.size() > max) {
    return absl::InvalidArgumentError(
        absl::StrCat(task, " takes ", min == max ? absl::StrCat(min) : absl::StrCat(min, "..", max),
                     " arguments, the record has ", args.size()));
  }
  return absl::OkStatus();
}

[[nodiscard]] absl::StatusOr<nlohmann::json> DenseArgs(const std::string& task,
                                                       const nlohmann::json& args) {
  TF_RETURN_IF_ERROR(CheckArgCount(task, args, 2, 4));
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> data, ReadTensor(task, "data", args[0], 2));
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> weight, ReadTensor(task, "weight", args[1], 2));
  if (data[1] != weight[1]) {
    return ArgError(task, "weight",
                    absl::StrCat("shape [", absl::StrJoin(weight, ", "), "] does not match data [",
                                 absl::StrJoin(data, ", "), "] (expected [N, K])"));
  }
  if (!ArgOrNull(args, 2).is_null()) {
    return ArgError(task, "bias", "a fused bias is not part of TuneFleet's dense workload");
  }
  TF_RETURN_IF_ERROR(CheckOutDtype(task, ArgOrNull(args, 3)));
  return nlohmann::json{{"M", data[0]}, {"N", weight[0]}, {"K", data[1]}, {"layout", "NK"}};
}

[[nodiscard]] absl::StatusOr<bool> ReadFlag(const std::string& task, const std::string& what,
                                            const nlohmann::json& arg, bool default_value) {
  if (arg.is_null()) return default_value;
  if (arg.is_boolean()) return arg.get<bool>();
  if (arg.is_number_integer() && (arg == 0 || arg == 1)) return arg == 1;
  return ArgError(task, what, absl::StrCat("expected a boolean, got ", arg.dump()));
}

[[nodiscard]] absl::StatusOr<nlohmann::json> BatchMatmulArgs(const std::string& task,
                                                             const nlohmann::json& args) {
  TF_RETURN_IF_ERROR(CheckArgCount(task, args, 2, 6));
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> a, ReadTensor(task, "tensor_a", args[0], 3));
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> b, ReadTensor(task, "tensor_b", args[1], 3));
  TF_RETURN_IF_ERROR(CheckOutDtype(task, ArgOrNull(args, 3)));
  TF_ASSIGN_OR_RETURN(bool transpose_a, ReadFlag(task, "transpose_a", ArgOrNull(args, 4), false));
  TF_ASSIGN_OR_RETURN(bool transpose_b, ReadFlag(task, "transpose_b", ArgOrNull(args, 5), true));
  if (transpose_a) {
    return ArgError(task, "transpose_a", "A stored [batch, K, M] is not a TuneFleet layout");
  }
  if (a[0] != b[0]) {
    return ArgError(task, "tensor_b",
                    absl::StrCat("batch ", b[0], " differs from tensor_a's ", a[0],
                                 " (broadcast batches are not a TuneFleet workload)"));
  }
  const int64_t k = a[2];
  const int64_t n = transpose_b ? b[1] : b[2];
  if ((transpose_b ? b[2] : b[1]) != k) {
    return ArgError(task, "tensor_b",
                    absl::StrCat("shape [", absl::StrJoin(b, ", "), "] does not match K = ", k));
  }
  const nlohmann::json& out_shape = ArgOrNull(args, 2);
  if (!out_shape.is_null() && out_shape != nlohmann::json::array({a[0], a[1], n})) {
    return ArgError(task, "out_shape",
                    absl::StrCat(out_shape.dump(), " is not [batch, M, N] = [", a[0], ", ", a[1],
                                 ", ", n, "]"));
  }
  return nlohmann::json{
      {"B", a[0]}, {"M", a[1]}, {"N", n}, {"K", k}, {"layout", transpose_b ? "NK" : "KN"}};
}

// Both NCHW signatures; `nchwc` adds the layout and out_layout arguments.
[[nodiscard]] absl::StatusOr<nlohmann::json> ConvArgsOf(const std::string& task,
                                                        const nlohmann::json& args, bool nchwc,
                                                        bool depthwise) {
  const size_t count = nchwc ? 8 : 6;
  TF_RETURN_IF_ERROR(CheckArgCount(task, args, count - 1, count));
  if (nchwc) {
    for (size_t i : {5, 6}) {
      const nlohmann::json& layout = args[i];
      if (layout != "NCHW") {
        return ArgError(task, i == 5 ? "layout" : "out_layout",
                        absl::StrCat(layout.dump(),
                                     " is not supported: only tasks on NCHW tensors map onto "
                                     "TuneFleet's workloads (blocked NCHW[x]c ones do not)"));
      }
    }
  }
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> data, ReadTensor(task, "data", args[0], 4));
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> kernel, ReadTensor(task, "kernel", args[1], 4));
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> strides, ReadInts(task, "strides", args[2], {1, 2}, 1));
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> padding,
                      ReadInts(task, "padding", args[3], {1, 2, 4}, 0));
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> dilation,
                      ReadInts(task, "dilation", args[4], {1, 2}, 1));
  TF_RETURN_IF_ERROR(CheckOutDtype(task, ArgOrNull(args, count - 1)));
  if (strides.size() == 1) strides.push_back(strides[0]);
  if (dilation.size() == 1) dilation.push_back(dilation[0]);
  if (padding.size() == 1) padding.assign(4, padding[0]);
  if (padding.size() == 2) padding = {padding[0], padding[1], padding[0], padding[1]};

  nlohmann::json out = {{"N", data[0]},
                        {"C", data[1]},
                        {"H", data[2]},
                        {"W", data[3]},
                        {"R", kernel[2]},
                        {"S", kernel[3]},
                        {"stride_h", strides[0]},
                        {"stride_w", strides[1]},
                        {"pad_top", padding[0]},
                        {"pad_left", padding[1]},
                        {"pad_bottom", padding[2]},
                        {"pad_right", padding[3]},
                        {"dil_h", dilation[0]},
                        {"dil_w", dilation[1]}};
  if (depthwise) {
    // TOPI's depthwise kernel is [channels, multiplier, R, S].
    if (kernel[0] != data[1] || kernel[1] != 1) {
      return ArgError(task, "kernel",
                      absl::StrCat("shape [", absl::StrJoin(kernel, ", "),
                                   "] is not [C, 1, R, S] with C = ", data[1],
                                   " (TuneFleet's depthwise workload has channel multiplier 1)"));
    }
  } else {
    if (kernel[1] != data[1]) {
      return ArgError(task, "kernel",
                      absl::StrCat("shape [", absl::StrJoin(kernel, ", "), "] has input channels ",
                                   kernel[1], ", data has ", data[1],
                                   " (grouped convolutions are not a TuneFleet workload)"));
    }
    out["K"] = kernel[0];
  }
  return out;
}

// The TuneFleet args of `task`, before the workload checks their values.
[[nodiscard]] absl::StatusOr<nlohmann::json> OurArgs(const TvmTask& task,
                                                     const nlohmann::json& args) {
  switch (task.signature) {
    case TvmSignature::kDense:
      return DenseArgs(task.task_name, args);
    case TvmSignature::kBatchMatmul:
      return BatchMatmulArgs(task.task_name, args);
    case TvmSignature::kConvNchwc:
    case TvmSignature::kConvNchw:
      break;
  }
  const bool depthwise = std::string(task.workload_name) == "depthwise_conv2d_nchw";
  return ConvArgsOf(task.task_name, args, task.signature == TvmSignature::kConvNchwc, depthwise);
}

}  // namespace

[[nodiscard]] absl::StatusOr<WorkloadOfTvmTask> WorkloadFromTvmTask(const std::string& task_name,
                                                                    const nlohmann::json& args) {
  const TvmTask* task = nullptr;
  for (const TvmTask& t : kTvmTasks) {
    if (task_name == t.task_name) task = &t;
  }
  if (task == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "AutoTVM task \"", task_name,
        "\" has no TuneFleet workload (known: ", absl::StrJoin(KnownTvmTaskNames(), ", "), ")"));
  }
  if (!args.is_array()) {
    return absl::InvalidArgumentError(
        absl::StrCat(task_name, " arguments must be a list, got ", args.dump()));
  }
  absl::StatusOr<nlohmann::json> our_args = OurArgs(*task, args);
  if (!our_args.ok()) return our_args.status();
  // The workload checks the values (ranges, padding against the kernel, ...)
  // and gives the canonical args our own records carry.
  absl::StatusOr<std::unique_ptr<Workload>> workload = MakeWorkload(task->workload_name, *our_args);
  if (!workload.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(task_name, " arguments do not make a ",
                                                   task->workload_name,
                                                   " workload: ", workload.status().message()));
  }
  return WorkloadOfTvmTask{task->workload_name, (*workload)->args()};
}

std::vector<std::string> KnownTvmTaskNames() {
  std::vector<std::string> names;
  for (const TvmTask& t : kTvmTasks) names.push_back(t.task_name);
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace tunefleet
