// TVM's AutoTVM task descriptions mapped onto TuneFleet workloads. An AutoTVM
// record names a TOPI task ("dense_pack.x86", "conv2d_NCHWc.x86", ...) and
// the task's arguments as TVM serialises them: tensors as
// ["TENSOR", shape, dtype], other arguments as plain JSON. This file turns
// the ones TuneFleet computes into (workload name, canonical args), the same
// args our own records carry, or says precisely why it cannot.
//
// Tasks understood (TVM v0.18 signatures, fp32 only):
//   dense_nopack.x86, dense_pack.x86, dense_small_batch.gpu,
//   dense_large_batch.gpu          (data [M, K], weight [N, K], bias, out_dtype)
//                                  -> dense, layout NK; bias must be null
//   batch_matmul.x86, batch_matmul.cuda
//                                  (A, B, out_shape, out_dtype, transpose_a,
//                                  transpose_b) -> batch_matmul; A [B, M, K]
//                                  (transpose_a false), B [B, N, K] (layout
//                                  NK) or [B, K, N] (transpose_b false, KN)
//   conv2d_NCHWc.x86               (data, kernel, strides, padding, dilation,
//                                  layout, out_layout, out_dtype) with layout
//                                  and out_layout "NCHW" -> conv2d_nchw
//   conv2d_nchw.cuda, conv2d_nchw_spatial_pack.arm_cpu
//                                  (data, kernel, strides, padding, dilation,
//                                  out_dtype) -> conv2d_nchw
//   depthwise_conv2d_NCHWc.x86     (as conv2d_NCHWc.x86) -> depthwise_conv2d_nchw
//   depthwise_conv2d_nchw.cuda, depthwise_conv2d_nchw.arm_cpu
//                                  (as conv2d_nchw.cuda) -> depthwise_conv2d_nchw
// Padding reads as TVM's get_pad_tuple does: p, [h, w] or
// [top, left, bottom, right]; strides and dilation as s or [h, w].
#ifndef TUNEFLEET_TUNER_CORE_RECORDS_TVM_WORKLOAD_H_
#define TUNEFLEET_TUNER_CORE_RECORDS_TVM_WORKLOAD_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace tunefleet {

struct WorkloadOfTvmTask {
  std::string workload_name;     // e.g. "dense"
  nlohmann::json workload_args;  // canonical, as Workload::args() gives them
};

// The TuneFleet workload of one AutoTVM task. InvalidArgument naming the
// problem: an unknown task name (listing the known ones), a wrong number of
// arguments, an argument of the wrong type or shape, a dtype other than
// float32, or arguments TuneFleet's workload cannot express (a bias, a
// channel multiplier above 1, a blocked NCHW[x]c input, ...).
[[nodiscard]] absl::StatusOr<WorkloadOfTvmTask> WorkloadFromTvmTask(const std::string& task_name,
                                                                    const nlohmann::json& args);

// The AutoTVM task names WorkloadFromTvmTask understands, sorted.
std::vector<std::string> KnownTvmTaskNames();

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_RECORDS_TVM_WORKLOAD_H_
