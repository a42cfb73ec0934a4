// The block-tiled GEMM that CUDA templates share (dense, implicit-GEMM
// convolution): C[b][m][n] = sum_k A[b][m][k] * B[b][k][n], with the steps the
// public record of fast FP32 SIMT GEMMs names, each a knob of the space:
//
//   tile_m, tile_n   [blocks, threads, per-thread] splits of M and N: the
//                    block tile is BM x BN, each thread computes tm x tn;
//   tile_k           [steps, bk]: K staged through shared memory bk at a time;
//   frag_m, frag_n   how a thread's rows (columns) lie in the block tile:
//                    runs of 1 (interleaved across threads), 4 (float4 runs,
//                    read from shared memory with 128-bit loads without bank
//                    conflicts) or all tm (contiguous);
//   vec_load         global loads of 1, 2 or 4 floats where the operand is
//                    contiguous along the staged dimension;
//   pad              0 or 4 floats of padding per shared-memory row (A is
//                    stored transposed, k-major, and its transposing stores
//                    conflict without it);
//   double_buffer    two shared-memory stages: the next K step is loaded from
//                    global memory into registers while this one computes,
//                    one barrier per step;
//   raster           blocks walk the M x N grid in groups of this many block
//                    rows, column by column, so blocks running together share
//                    panels of A and B in L2.
//
// Each thread keeps its A and B fragments of one k in registers (loaded with
// vector loads where frag_* allows) and its accumulators in registers.
#ifndef TUNEFLEET_TUNER_CORE_TEMPLATES_GEMM_CUDA_H_
#define TUNEFLEET_TUNER_CORE_TEMPLATES_GEMM_CUDA_H_

#include <cstdint>
#include <functional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tuner_core/ir/ir.h"
#include "tuner_core/space/config_space.h"

namespace tunefleet {

// One GEMM operand as the block tiles read it: A is indexed (batch, row, k),
// B (batch, column, k), each returning the global value (a Load, or a Select
// for a zero-padded window).
struct GpuGemmOperand {
  std::function<ir::Expr(ir::Expr batch, ir::Expr outer, ir::Expr k)> element;
  // Which index is contiguous in memory: k (dense A, B in layout NK) or the
  // outer one (B in layout KN, an image's pixels). Threads of a block walk
  // that index fastest, so their loads coalesce.
  bool k_contiguous = true;
  // `vec_load` consecutive elements along the contiguous index form one
  // aligned vector load (a plain tensor whose run length divides evenly).
  bool vectorizable = true;
};

struct GpuGemmSpec {
  int64_t m = 0, n = 0, k = 0;
  int64_t batch = 1;  // independent GEMMs, on blockIdx.z
  GpuGemmOperand a, b;
  // Stores `value` at C[batch][row][column].
  std::function<ir::Stmt(ir::Expr batch, ir::Expr row, ir::Expr column, ir::Expr value)> store;
  // Consecutive columns are consecutive floats of the output, so runs of
  // frag_n columns may be one vector store.
  bool store_vectorizable = true;
};

// Adds the GEMM's knobs (above) to `space`.
[[nodiscard]] absl::Status DefineGpuGemmSpace(const GpuGemmSpec& spec, ConfigSpace& space);

// The kernel's loop nest for `config`: blocks, threads, shared stages and
// register tiles. Errors name `template_name` and the knob that does not fit.
[[nodiscard]] absl::StatusOr<ir::Stmt> GpuGemmNest(const GpuGemmSpec& spec, const Config& config,
                                                   const char* template_name);

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_TEMPLATES_GEMM_CUDA_H_
