// Winograd's minimal filtering for 3x3 convolutions (Lavin & Gray, "Fast
// Algorithms for Convolutional Neural Networks", 2016): F(m x m, 3 x 3)
// computes each m x m tile of the output from an (m+2) x (m+2) tile of the
// input with (m+2)^2 multiplies per input/output channel pair instead of
// 9 m^2 (F(2x2): 2.25x fewer, F(4x4): 4x fewer), as
//   Y = A^T [ (G g G^T) . (B^T d B) ] A
// summed over the input channels. The element-wise products summed over
// channels are, for each of the (m+2)^2 positions, one matrix product
// (tiles x C) . (C x K): a pointwise convolution over the tiles, which is
// where the time goes and what the register tile tiles.
//
// conv2d_nchwc.x86 offers it as values of its "reduce" knob for 3x3,
// stride-1, undilated, ungrouped convolutions ("winograd_f2",
// "winograd_f4"); the compiler transforms the weights at compile time with
// WinogradTransformWeights, the same U the kernel's prepare stage writes.
//
//   WinogradConv w{args, /*m=*/4, ib, ob, rows, vec};
//   Stmt body = WinogradCompute(w, "data_pad", "kernel_vec", "out_nchwc");
#ifndef TUNEFLEET_TUNER_CORE_TEMPLATES_WINOGRAD_H_
#define TUNEFLEET_TUNER_CORE_TEMPLATES_WINOGRAD_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "tuner_core/ir/ir.h"
#include "tuner_core/templates/nchwc_layout.h"
#include "tuner_core/workloads/conv_args.h"

namespace tunefleet {

// Whether `a` is a convolution Winograd's F(m x m, 3 x 3) computes here.
bool WinogradApplies(const ConvArgs& a);

// The output tile sizes offered (F(2x2, 3x3) and F(4x4, 3x3)); larger tiles
// lose too much fp32 accuracy for a model's 1e-4.
inline constexpr int64_t kWinogradTiles[] = {2, 4};

// The tile an untuned convolution `a` is computed with: 4 (F(4x4, 3x3))
// where Winograd applies and there are enough tiles and channels for the
// products to dominate the transforms (at least 16 output tiles and 16
// input channels: ResNet-18's 56x56 to 14x14 layers, 1.8-2.7x faster than
// direct on a Zen 3); on smaller maps (7x7, 8x8), 2 (F(2x2, 3x3)) where it
// has 16 tiles and at least 128 input and output channels: its
// transformed weights are 16/9 of the direct ones, not F(4x4)'s 4x, and
// deep channels pay for the transforms (ResNet's 512-channel 7x7 layers);
// else 0, direct.
int64_t WinogradDefaultTile(const ConvArgs& a);

// The "reduce" knob value of F(m x m, 3 x 3), "winograd_f<m>", and back: the
// m of such a value, 0 for any other.
std::string WinogradReduceValue(int64_t m);
int64_t WinogradTileOf(absl::string_view reduce_value);

// The transform matrices of F(m x m, 3 x 3), row-major: B^T (alpha x
// alpha), G (alpha x 3), A^T (m x alpha), alpha = m + 2.
struct WinogradMatrices {
  int64_t m = 0, alpha = 0;
  std::vector<double> bt, g, at;
};
// m must be one of kWinogradTiles.
const WinogradMatrices& WinogradMatricesFor(int64_t m);

// One Winograd convolution kernel: the workload, the tile, the blocks of its
// blocked input (ib) and output (ob), and the matrix products' register
// tile: `rows` tiles (at most WinogradTiles) x ob channels in vectors of
// `vec` lanes.
struct WinogradConv {
  ConvArgs a;
  int64_t m = 4;
  int64_t ib = 1, ob = 1;
  int64_t rows = 1, vec = 8;
};

// The zero padding the input is read with: the workload's top/left, and
// height and width covering every tile (a whole number of m x m tiles plus
// the kernel's 2).
Padding WinogradInputPadding(const ConvArgs& a, int64_t m);

// The m x m output tiles of all the batch's images.
int64_t WinogradTiles(const ConvArgs& a, int64_t m);

// Floats of the transformed weights U: [alpha^2][K/ob][C][ob].
int64_t WinogradKernelElements(const ConvArgs& a, int64_t m);

// Writes U into `dst` from the "kernel" argument [K][C][3][3] (the
// kernel's untimed prepare stage).
ir::Stmt WinogradPackKernel(const WinogradConv& w, const std::string& dst);

// The convolution: `data` is the input blocked by ib and padded by
// WinogradInputPadding, `kernel_vec` U, `out` the output blocked by ob.
// Three parallel passes (input tiles transformed, the alpha^2 products,
// output tiles transformed back), the first two into workspace buffers.
ir::Stmt WinogradCompute(const WinogradConv& w, const std::string& data,
                         const std::string& kernel_vec, const std::string& out);

// U from weights [K][C][3][3] (what WinogradPackKernel writes), for the
// compiler, which packs weights once at compile time.
std::vector<float> WinogradTransformWeights(const std::vector<float>& weights, int64_t k, int64_t c,
                                            int64_t m, int64_t ob);

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_TEMPLATES_WINOGRAD_H_
