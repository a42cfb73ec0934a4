// The packed GEMM loop nest that the dense and batch_matmul CPU templates
// share, built the way BLIS builds a GEMM (Goto & van de Geijn): B packed
// into NR-wide panels (and optionally A into MR-tall panels), an MR x NR
// register tile of C accumulated over a KC block of the shared dimension
// with vector FMAs, loops over panels inside MC x NC blocks for cache reuse,
// and a parallel loop over (batch item, block).
//
// Knobs (DefineGemmPackSpace; all chosen by the search, none hard-coded):
//   vec       vector lanes (4 SSE/NEON, 8 AVX2, 16 AVX-512; wider than the
//             target is an INSTANTIATION_ERROR at build time)
//   nr_vecs   vectors per tile row, NR = vec * nr_vecs
//   mr        rows of the register tile
//   kc        shared-dimension block
//   mc_panels MR-panels per M block,  nc_panels NR-panels per N block
//   unroll_k  unrolling of the innermost k loop
//   pack_a    pack A into panels (1) or read it in place (0)
//   order     panel loop order inside a block ("nm": B panel outer, A inner)
//   fuse      order of the fused parallel block loop ("mn" or "nm")
//   prefetch_b  software prefetch of the packed B panel 16 k steps ahead of
//             the FMAs, one PREFETCHT0/PRFM per cache line a k step consumes
//             (0: none, the hardware prefetcher alone); it comes last and
//             reads as 0 from records written before it existed
//             (ConfigSpace::DefineAddedKnob)
// Sizes that do not divide the tiles are handled by zero-padded panels and
// guarded edge tiles.
//
// The dense template, whose B is a layer's weights (a constant of the model),
// adds (DefineDenseGemmSpace):
//   mr        also 12, 14 and 16 rows (AVX-512's 32 registers hold 14 x 2)
//   pack_b    "call": B packed inside the timed kernel on every call; "once":
//             B packed once, untimed, into a staged buffer the timed kernel
//             reads (a compiled network packs its weights at compile time)
//   kernel    "panel": the packed micro-kernel above; "dot" (layout NK
//             only): B read in place, no packing at all, each output a dot
//             product along k: an mr x nr_vecs tile of (A row, B row) pairs
//             held as vectors of k, reduced across lanes at the end (the
//             small-M and matrix-vector path: B streamed once, both threads
//             splitting N); kc, pack_a, pack_b and prefetch_b are inert
//             for it (ConfigSpace::DeclareInert: searched once)
#ifndef TUNEFLEET_TUNER_CORE_TEMPLATES_GEMM_PACK_H_
#define TUNEFLEET_TUNER_CORE_TEMPLATES_GEMM_PACK_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tuner_core/ir/ir.h"
#include "tuner_core/space/config_space.h"
#include "tuner_core/templates/template.h"

namespace tunefleet {

// C[b, m, n] = sum_k A[b, m, k] * B[b, n, k] (b_is_nk) or B[b, k, n], over
// buffers "A", "B", "C"; batch 1 is dense.
struct GemmShape {
  int64_t batch = 1, m = 1, n = 1, k = 1;
  bool b_is_nk = true;
};

// The parameters of one instantiation (a config applied to a shape).
struct GemmPackParams {
  int64_t batch, M, N, K;
  bool b_is_nk;
  int64_t vec, nr_vecs, NR, MR, KC, mc_panels, nc_panels, unroll_k;
  bool pack_a, b_panel_outer, fuse_mn;
  int64_t prefetch_b = 0;    // k steps ahead; 0: off
  bool pack_b_once = false;  // B packed in the untimed prepare stage
  bool dot = false;          // the "dot" kernel: no packing, B read in place
};

// A packed GEMM kernel: the timed body, and for pack_b "once" the untimed
// stage that packs B and the staged buffer it fills (ir::LoweredFunc).
struct PackedGemmKernel {
  ir::Stmt body;
  ir::Stmt prepare;  // undefined unless B is packed once
  std::vector<ir::StagedBuffer> staged;
};

// Appends the knobs above to `space`, with kc candidates capped at k.
[[nodiscard]] absl::Status DefineGemmPackSpace(int64_t k, ConfigSpace* space);

// The kernel body for one config; InvalidArgument for a config it cannot
// take (an oversized register tile).
[[nodiscard]] absl::StatusOr<ir::Stmt> BuildPackedGemm(const GemmShape& shape,
                                                       const Config& config);

// The dense space: DefineGemmPackSpace's knobs widened as listed above;
// `b_is_nk` adds the "dot" kernel.
[[nodiscard]] absl::Status DefineDenseGemmSpace(int64_t k, bool b_is_nk, ConfigSpace* space);

// The kernel for a config of DefineDenseGemmSpace; InvalidArgument for one
// it cannot take (an oversized register tile).
[[nodiscard]] absl::StatusOr<PackedGemmKernel> BuildDenseGemm(const GemmShape& shape,
                                                              const Config& config);

// The register tile of a config of DefineGemmPackSpace or
// DefineDenseGemmSpace, as MicroKernel and DotKernel use registers:
//   panel  mr x nr_vecs accumulators; per k step nr_vecs vectors of the
//          packed B row (each reused by every row) and one value of A
//          broadcast per row (one register at a time);
//   dot    mr x nr_vecs accumulators of k; per step one k vector of each of
//          the mr rows of A and the nr_vecs rows of B, each reused across
//          the other side of the tile.
// The tile does not depend on the shapes: `workload` (any of the three
// templates' workloads) is not read. An error naming the knob when the
// config lacks one. Each of the three templates declares this function.
[[nodiscard]] absl::StatusOr<RegisterDemand> GemmRegisterDemand(const Workload& workload,
                                                                const Config& config);

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_TEMPLATES_GEMM_PACK_H_
