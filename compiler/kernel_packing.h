// How a compiled model runs a blocked convolution kernel without its staged
// prepare/finish (common/kernel_abi.h): the conv2d_nchwc.x86 and
// depthwise_conv2d_nchwc.x86 kernels read their input and write their
// output in NCHW[x]c through the staged buffers data_nchwc / out_nchwc and
// their weights from kernel_vec. Passing the previous layer's blocked output
// as data_nchwc, weights packed here at compile time as kernel_vec and a
// blocked buffer as out_nchwc runs only the kernel's timed entry: the same
// code the tuner measured for the workload's NCHWc layout.
//
//   TF_ASSIGN_OR_RETURN(std::optional<BlockedConvKernel> blocked, BlockedConvOf(choice));
//   if (blocked) packed = PackBlockedWeights(weights, *blocked);
// Dense kernels that pack their weights once (PackedDenseOf) get them packed
// here the same way.
#ifndef TUNEFLEET_COMPILER_KERNEL_PACKING_H_
#define TUNEFLEET_COMPILER_KERNEL_PACKING_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/kernel_choice.h"

namespace tunefleet {

struct BlockedConvKernel {
  int64_t k = 0, c = 0, r = 0, s = 0;  // weights [K, C (per group), R, S]
  int64_t in_block = 1;                // data_nchwc's channel block
  int64_t out_block = 1;               // out_nchwc's channel block
  int64_t out_row_width = 0;           // out_nchwc's rows (>= the output width)
  bool depthwise = false;              // weights [C, 1, R, S], one channel block
  // Winograd's output tile side (reduce "winograd_f<m>"), 0 for a direct
  // convolution: kernel_vec then holds the transformed weights
  // (tuner_core/templates/winograd.h), [(m+2)^2][K/ob][C][ob].
  int64_t winograd_tile = 0;
  // Staged buffer sizes (floats) in the kernel's order: data_nchwc, kernel_vec, out_nchwc.
  int64_t data_elements = 0, kernel_elements = 0, out_elements = 0;
};

// The blocked geometry of `choice`'s kernel, or nullopt when its template
// is not one whose staged buffers are known here (the plan then lets the
// runtime run prepare/entry/finish on NCHW tensors). InvalidArgument when
// the template does not instantiate the config.
[[nodiscard]] absl::StatusOr<std::optional<BlockedConvKernel>> BlockedConvOf(
    const KernelChoice& choice);

// `weights` ([K][C][R][S], or [C][1][R][S] for depthwise) in the kernel's
// kernel_vec layout: [K/ob][C/ib][R][S][ib][ob] (depthwise: [C/b][R][S][b];
// Winograd: the transformed weights), what the template's prepare stage
// writes.
std::vector<float> PackBlockedWeights(const std::vector<float>& weights,
                                      const BlockedConvKernel& kernel);

// A dense_gemm.x86 kernel that packs B once (pack_b "once", the panel
// kernel, B as [N, K]): its staged Bp, NR-wide panels [N/NR][K][NR] zero
// past N, is what PackDenseWeights writes, so the compiled model packs the
// weights at compile time and runs only the timed entry.
struct PackedDenseKernel {
  int64_t n = 0, k = 0;
  int64_t panel_width = 0;      // NR = vec * nr_vecs
  int64_t packed_elements = 0;  // the staged Bp's floats
};

// nullopt for any other template or config (the dot kernel reads B in
// place; pack_b "call" packs inside the entry). InvalidArgument when the
// template does not instantiate the config.
[[nodiscard]] absl::StatusOr<std::optional<PackedDenseKernel>> PackedDenseOf(
    const KernelChoice& choice);

// `nk` ([N][K]) as the kernel's Bp.
std::vector<float> PackDenseWeights(const std::vector<float>& nk, const PackedDenseKernel& kernel);

}  // namespace tunefleet

#endif  // TUNEFLEET_COMPILER_KERNEL_PACKING_H_
