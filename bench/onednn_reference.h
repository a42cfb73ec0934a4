// oneDNN reference timings for convolution benchmarks: fp32 forward-inference
// convolution timed the way benchdnn does it (oneDNN chooses blocked layouts
// via format_tag::any; the reorders from plain NCHW/OIHW happen once, outside
// the timing; only the convolution primitive's executes are timed).
//
// Threading: Debian's libdnnl.so.2 (oneDNN 2.6.3) is built with the OpenMP CPU
// runtime (DNNL_CPU_RUNTIME == DNNL_RUNTIME_OMP; it links libgomp). The thread
// count is set with omp_set_num_threads() on the calling thread before the
// primitives are created (oneDNN's JIT kernels pick their blocking for the
// thread count at creation) and the caller's previous value is restored on
// return. Call these functions from one thread at a time.
#ifndef TUNEFLEET_BENCH_ONEDNN_REFERENCE_H_
#define TUNEFLEET_BENCH_ONEDNN_REFERENCE_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tunefleet {
namespace bench {

// NCHW input, OIHW weights (KCRS), NCHW output. Padding is explicit per side.
// Depthwise: groups == c, requires k == c; weights are {c, 1, 1, r, s}.
struct ConvShape {
  int64_t n = 1, c = 1, h = 1, w = 1;  // input
  int64_t k = 1, r = 1, s = 1;         // output channels, kernel height/width
  int64_t stride_h = 1, stride_w = 1;
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  int64_t dil_h = 1, dil_w = 1;  // 1 == no dilation
  bool depthwise = false;
};

// Output spatial size (negative or zero when the shape is invalid).
int64_t ConvOutHeight(const ConvShape& shape);
int64_t ConvOutWidth(const ConvShape& shape);
// Multiply-adds * 2 of the convolution (no bias).
double ConvFlops(const ConvShape& shape);
// InvalidArgumentError for non-positive sizes/strides/dilations, negative
// padding, an empty output or depthwise with k != c.
[[nodiscard]] absl::Status ValidateConvShape(const ConvShape& shape);

struct ReferenceTiming {
  double seconds = 0;  // best per-call time (minimum over repeats of the per-call mean)
  // "<algorithm>:<impl_info_str>", e.g. "direct:jit:avx512_core"; when the
  // requested algorithm was convolution_auto, "auto-><resolved>:<impl>", e.g.
  // "auto->winograd:jit_wino_4x3:avx512_core".
  std::string algorithm;
};

// Times convolution_direct and convolution_auto (an algorithm whose primitive
// descriptor fails to create, e.g. unimplemented, is skipped) and returns the
// faster one. Per algorithm: 3 warm-up calls, then 3 repeats; each repeat
// calls the primitive until at least `min_seconds` have elapsed (at least one
// call) and its per-call mean is recorded; the minimum over repeats is kept.
// Inputs are random. dnnl::error becomes InternalError with its message.
[[nodiscard]] absl::StatusOr<ReferenceTiming> OneDnnConvSeconds(const ConvShape& shape, int threads,
                                                                double min_seconds = 0.5);

// For tests: runs the same pipeline once (plain -> chosen formats reorders,
// the convolution, reorder back) on caller data. nchw_src is n*c*h*w,
// oihw_weights is k*c*r*s (depthwise: c*r*s), nchw_dst is n*k*oh*ow.
// use_auto selects convolution_auto instead of convolution_direct.
[[nodiscard]] absl::Status OneDnnConvForTest(const ConvShape& shape, const float* nchw_src,
                                             const float* oihw_weights, float* nchw_dst,
                                             int threads = 1, bool use_auto = false);

}  // namespace bench
}  // namespace tunefleet

#endif  // TUNEFLEET_BENCH_ONEDNN_REFERENCE_H_
