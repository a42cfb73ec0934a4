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
  int64_t reduce_block = 1;            // the config's input-channel block (the packed weights')
  // group_conv2d_nchwc.x86: the whole groups in one block (its reduce_block
  // holds their lane_groups * c input channels, the weights are packed by
  // c); 1 otherwise.
  int64_t lane_groups = 1;
  int64_t out_block = 1;  // out_nchwc's channel block
  // It copies its input (a padding or subsampling pass) whatever block the
  // input arrives in (conv2d_nchwc_x86.h Conv2dNchwcCopiesInput).
  bool copies_input = false;
  int64_t out_row_width = 0;  // out_nchwc's rows (>= the output width)
  bool depthwise = false;     // weights [C, 1, R, S], one channel block
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

// The channel blocks besides its own that `kernel` reads its input in at
// no more cost than in its own (none for depthwise kernels): multiples of
// its reduce_block, which its direct reduction reads in place and its
// padding, subsampling or Winograd pass copies from as cheaply; divisors
// too, where it copies its input anyway (conv2d_nchwc_x86.h
// Conv2dNchwcCopiesInput).
struct RelatedBlockReads {
  bool multiples = false;
  bool divisors = false;
  // Where > 0, only the multiples dividing it: the channels of one group,
  // where the reduction reads them in place (a block holding several
  // groups' is read once per group: RegNet-Y's grouped layers reading
  // 48-52-channel blocks were 1.3-1.5x slower).
  int64_t multiples_within = 0;

  // Whether a kernel reducing over blocks of `own` channels reads `block`.
  bool Takes(int64_t own, int64_t block) const {
    return block >= 1 && ((multiples && block % own == 0 &&
                           (multiples_within == 0 || multiples_within % block == 0)) ||
                          (divisors && own % block == 0));
  }
};
RelatedBlockReads RelatedBlockReadsOf(const BlockedConvKernel& kernel);

// Whether `kernel` reads an input blocked by `block` channels (a divisor
// of C: a producer's) at no more cost than one in its own in_block: its
// own, or a related block (RelatedBlockReadsOf). Such a kernel is built
// with the workload's in_block (WithInputBlock) where its producer's block
// differs, in place of a relayout step.
bool ReadsBlockAtNoCost(const BlockedConvKernel& kernel, int64_t block);

// `choice` with its workload's in_block set to `block` (dropped where it is
// the config's own): the same config, reading its input as it arrives.
[[nodiscard]] absl::StatusOr<KernelChoice> WithInputBlock(const KernelChoice& choice,
                                                          int64_t block);

// `choice` and its kernel `blocked` rebuilt to read an input that arrives
// in `block` where its rows are the image's (`exact_rows`) and `blocked`
// reads that block at no extra cost (ReadsBlockAtNoCost); left as they are
// otherwise.
[[nodiscard]] absl::Status ReadInputInBlockWhereFree(int64_t block, bool exact_rows,
                                                     KernelChoice* choice,
                                                     BlockedConvKernel* blocked);

// `weights` ([K][C][R][S], or [C][1][R][S] for depthwise) in the kernel's
// kernel_vec layout: [K/ob][C/ib][R][S][ib][ob], ib its reduce_block
// (depthwise: [C/b][R][S][b]; Winograd: the transformed weights), what the
// template's prepare stage writes.
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
