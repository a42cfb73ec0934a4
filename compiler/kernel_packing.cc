#include "compiler/kernel_packing.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "tuner_core/templates/conv2d_nchwc_x86.h"
#include "tuner_core/templates/group_conv2d_nchwc_x86.h"
#include "tuner_core/templates/winograd.h"

namespace tunefleet {
namespace {

// The input-channel block `choice`'s reduction reads, which its input
// arrives in where the workload names no in_block: tile_ic, or the
// channels of the whole groups of a group_conv2d_nchwc.x86 block.
[[nodiscard]] absl::StatusOr<int64_t> ReduceBlockOf(const KernelChoice& choice) {
  if (absl::StatusOr<int64_t> tile_ic = choice.config.GetInt("tile_ic"); tile_ic.ok()) {
    return *tile_ic;
  }
  TF_ASSIGN_OR_RETURN(const int64_t tile_oc, choice.config.GetInt("tile_oc"));
  const nlohmann::json& args = choice.task->workload().args();
  const int64_t groups = args.value("group", int64_t{1}), k = args.value("K", int64_t{0});
  if (groups < 1 || k < groups || tile_oc % (k / groups) != 0) {
    return absl::InternalError(absl::StrCat("tile_oc ", tile_oc, " is no whole groups"));
  }
  return tile_oc / (k / groups) * (args.value("C", int64_t{0}) / groups);
}

}  // namespace

[[nodiscard]] absl::StatusOr<std::optional<BlockedConvKernel>> BlockedConvOf(
    const KernelChoice& choice) {
  const Task& task = *choice.task;
  const std::string& name = task.tmpl().name();
  const bool depthwise = name == "depthwise_conv2d_nchwc.x86";
  const bool lane_groups = name == "group_conv2d_nchwc.x86";
  if (name != "conv2d_nchwc.x86" && !depthwise && !lane_groups) return std::nullopt;
  absl::StatusOr<ir::LoweredFunc> func = task.tmpl().Instantiate(task.workload(), choice.config);
  if (!func.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, " config ", choice.config.ToString(), ": ", func.status().message()));
  }
  // Only the NCHWc layout stages its tensors; an NCHW workload packs inside
  // its entry and keeps NCHW tensors.
  if (func->staged.size() != 3 || func->staged[0].name != "data_nchwc" ||
      func->staged[1].name != "kernel_vec" || func->staged[2].name != "out_nchwc" ||
      func->args.size() != 3 || func->args[1].shape.size() != 4 ||
      func->args[2].shape.size() != 4) {
    return std::nullopt;
  }
  BlockedConvKernel kernel;
  const std::vector<int64_t>& w = func->args[1].shape;
  const std::vector<int64_t>& out = func->args[2].shape;
  kernel.k = w[0];
  kernel.c = w[1];
  kernel.r = w[2];
  kernel.s = w[3];
  kernel.depthwise = depthwise;
  if (depthwise) {
    TF_ASSIGN_OR_RETURN(kernel.out_block, choice.config.GetInt("tile_c"));
    kernel.in_block = kernel.reduce_block = kernel.out_block;
  } else if (lane_groups) {
    // Whole groups per block: the input block holds the output block's groups.
    TF_ASSIGN_OR_RETURN(kernel.out_block, choice.config.GetInt("tile_oc"));
    TF_ASSIGN_OR_RETURN(kernel.reduce_block, ReduceBlockOf(choice));
    kernel.lane_groups = kernel.reduce_block / kernel.c;
    kernel.in_block = task.workload().args().value("in_block", kernel.reduce_block);
    TF_ASSIGN_OR_RETURN(
        kernel.copies_input,
        GroupConv2dNchwcCopiesInput(task.workload(), choice.config, kernel.reduce_block));
  } else {
    TF_ASSIGN_OR_RETURN(kernel.reduce_block, choice.config.GetInt("tile_ic"));
    kernel.in_block = task.workload().args().value("in_block", kernel.reduce_block);
    TF_ASSIGN_OR_RETURN(kernel.out_block, choice.config.GetInt("tile_oc"));
    TF_ASSIGN_OR_RETURN(const std::string reduce, choice.config.GetString("reduce"));
    kernel.winograd_tile = WinogradTileOf(reduce);
    TF_ASSIGN_OR_RETURN(kernel.copies_input, Conv2dNchwcCopiesInput(task.workload(), choice.config,
                                                                    kernel.reduce_block));
  }
  kernel.data_elements = func->staged[0].num_elements;
  kernel.kernel_elements = func->staged[1].num_elements;
  kernel.out_elements = func->staged[2].num_elements;
  const int64_t rows = out[0] * out[1] * out[2];  // N * K * OH
  const int64_t m = kernel.winograd_tile;
  const int64_t weights =
      m > 0 ? (m + 2) * (m + 2) * kernel.k * kernel.c : kernel.k * kernel.c * kernel.r * kernel.s;
  if (rows <= 0 || kernel.out_elements % rows != 0 || kernel.kernel_elements != weights) {
    return absl::InternalError(absl::StrCat(name, ": staged buffers of unexpected sizes"));
  }
  kernel.out_row_width = kernel.out_elements / rows;
  return kernel;
}

RelatedBlockReads RelatedBlockReadsOf(const BlockedConvKernel& kernel) {
  if (kernel.depthwise) return {};
  // Each lane finds its group's channels in any multiple of the block.
  if (kernel.lane_groups > 1) return {true, kernel.copies_input, 0};
  // Winograd's input transform reads its own padded copy, made by its
  // padding pass (if any).
  return {kernel.winograd_tile == 0 || kernel.copies_input, kernel.copies_input,
          kernel.copies_input ? 0 : kernel.c};  // weights [K, C / group, R, S]
}

bool ReadsBlockAtNoCost(const BlockedConvKernel& kernel, int64_t block) {
  return block == kernel.in_block || RelatedBlockReadsOf(kernel).Takes(kernel.reduce_block, block);
}

[[nodiscard]] absl::StatusOr<KernelChoice> WithInputBlock(const KernelChoice& choice,
                                                          int64_t block) {
  const Task& task = *choice.task;
  nlohmann::json args = task.workload().args();
  TF_ASSIGN_OR_RETURN(const int64_t own, ReduceBlockOf(choice));
  if (block == own) {
    args.erase("in_block");
  } else {
    args["in_block"] = block;
  }
  KernelChoice with;
  TF_ASSIGN_OR_RETURN(with.task,
                      Task::Make(task.tmpl().name(), task.workload().name(), args, task.target()));
  TF_ASSIGN_OR_RETURN(with.config, with.task->space().FromJson(choice.config.ToJson()));
  with.tuned = choice.tuned;
  with.source = choice.source;
  return with;
}

[[nodiscard]] absl::Status ReadInputInBlockWhereFree(int64_t block, bool exact_rows,
                                                     KernelChoice* choice,
                                                     BlockedConvKernel* blocked) {
  if (!exact_rows || block == blocked->in_block || !ReadsBlockAtNoCost(*blocked, block)) {
    return absl::OkStatus();
  }
  TF_ASSIGN_OR_RETURN(KernelChoice with, WithInputBlock(*choice, block));
  TF_ASSIGN_OR_RETURN(std::optional<BlockedConvKernel> rebuilt, BlockedConvOf(with));
  if (!rebuilt) return absl::InternalError("a blocked kernel rebuilt is not blocked");
  *choice = std::move(with);
  *blocked = *rebuilt;
  return absl::OkStatus();
}

std::vector<float> PackBlockedWeights(const std::vector<float>& weights,
                                      const BlockedConvKernel& p) {
  if (p.winograd_tile > 0) {
    return WinogradTransformWeights(weights, p.k, p.c, p.winograd_tile, p.out_block);
  }
  // Depthwise is the dense case with one input channel per group; with lane
  // groups each lane reduces over its group's p.c channels.
  const int64_t ib = p.depthwise ? 1 : p.lane_groups > 1 ? p.c : p.reduce_block;
  const int64_t ob = p.out_block;
  const int64_t icc_count = p.c / ib, occ_count = p.k / ob;
  std::vector<float> packed(weights.size());
  for (int64_t occ = 0; occ < occ_count; ++occ) {
    for (int64_t icc = 0; icc < icc_count; ++icc) {
      for (int64_t r = 0; r < p.r; ++r) {
        for (int64_t s = 0; s < p.s; ++s) {
          for (int64_t i = 0; i < ib; ++i) {
            for (int64_t o = 0; o < ob; ++o) {
              const int64_t src = (((occ * ob + o) * p.c + icc * ib + i) * p.r + r) * p.s + s;
              const int64_t dst =
                  ((((occ * icc_count + icc) * p.r + r) * p.s + s) * ib + i) * ob + o;
              packed[dst] = weights[src];
            }
          }
        }
      }
    }
  }
  return packed;
}

[[nodiscard]] absl::StatusOr<std::optional<PackedDenseKernel>> PackedDenseOf(
    const KernelChoice& choice) {
  const Task& task = *choice.task;
  if (task.tmpl().name() != "dense_gemm.x86") return std::nullopt;
  const nlohmann::json& args = task.workload().args();
  if (args.value("layout", std::string("NK")) != "NK") return std::nullopt;
  if (choice.config.GetString("pack_b").value_or("call") != "once" ||
      choice.config.GetString("kernel").value_or("panel") != "panel") {
    return std::nullopt;
  }
  absl::StatusOr<ir::LoweredFunc> func = task.tmpl().Instantiate(task.workload(), choice.config);
  if (!func.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "dense_gemm.x86 config ", choice.config.ToString(), ": ", func.status().message()));
  }
  PackedDenseKernel kernel;
  TF_ASSIGN_OR_RETURN(const int64_t vec, choice.config.GetInt("vec"));
  TF_ASSIGN_OR_RETURN(const int64_t nr_vecs, choice.config.GetInt("nr_vecs"));
  kernel.n = args.value("N", int64_t{0});
  kernel.k = args.value("K", int64_t{0});
  kernel.panel_width = vec * nr_vecs;
  const int64_t panels = (kernel.n + kernel.panel_width - 1) / kernel.panel_width;
  if (func->staged.size() != 1 || func->staged[0].name != "Bp" ||
      func->staged[0].num_elements != panels * kernel.panel_width * kernel.k) {
    return absl::InternalError("dense_gemm.x86: staged Bp of an unexpected size");
  }
  kernel.packed_elements = func->staged[0].num_elements;
  return kernel;
}

std::vector<float> PackDenseWeights(const std::vector<float>& nk, const PackedDenseKernel& p) {
  std::vector<float> packed(p.packed_elements, 0.0f);
  for (int64_t n = 0; n < p.n; ++n) {
    const int64_t panel = n / p.panel_width, j = n % p.panel_width;
    for (int64_t k = 0; k < p.k; ++k) {
      packed[(panel * p.k + k) * p.panel_width + j] = nk[n * p.k + k];
    }
  }
  return packed;
}

}  // namespace tunefleet
