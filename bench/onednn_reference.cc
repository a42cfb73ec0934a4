#include "bench/onednn_reference.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <dnnl.hpp>
#include <limits>
#include <random>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace tunefleet {
namespace bench {
namespace {

using dnnl::memory;
using Tag = dnnl::memory::format_tag;
using Dt = dnnl::memory::data_type;

constexpr int kWarmupCalls = 3;
constexpr int kRepeats = 3;

// Sets the OpenMP thread count (the runtime oneDNN uses here) for the calling
// thread and restores the previous value.
class OmpThreadScope {
 public:
  explicit OmpThreadScope(int threads) : previous_(omp_get_max_threads()) {
    omp_set_num_threads(threads);
  }
  ~OmpThreadScope() { omp_set_num_threads(previous_); }
  OmpThreadScope(const OmpThreadScope&) = delete;
  OmpThreadScope& operator=(const OmpThreadScope&) = delete;

 private:
  int previous_;
};

[[nodiscard]] absl::Status FromDnnl(const dnnl::error& e, const char* what) {
  return absl::InternalError(
      absl::StrCat("oneDNN ", what, ": ", e.what(), " (status ", static_cast<int>(e.status), ")"));
}

const char* AlgName(dnnl_alg_kind_t alg) {
  switch (alg) {
    case dnnl_convolution_direct:
      return "direct";
    case dnnl_convolution_winograd:
      return "winograd";
    case dnnl_convolution_auto:
      return "auto";
    default:
      return "unknown";
  }
}

memory::dims SrcDims(const ConvShape& s) { return {s.n, s.c, s.h, s.w}; }
memory::dims DstDims(const ConvShape& s) { return {s.n, s.k, ConvOutHeight(s), ConvOutWidth(s)}; }
memory::dims WeiDims(const ConvShape& s) {
  if (s.depthwise) return {s.c, 1, 1, s.r, s.s};  // {g, oc/g, ic/g, r, s}
  return {s.k, s.c, s.r, s.s};
}
Tag WeiPlainTag(const ConvShape& s) { return s.depthwise ? Tag::goihw : Tag::oihw; }

struct Conv {
  dnnl::convolution_forward::primitive_desc pd;
  dnnl::convolution_forward prim;
  std::string name;  // "<alg>:<impl>"
};

// Creates the primitive for one algorithm; Unimplemented when oneDNN has no
// implementation for it.
[[nodiscard]] absl::StatusOr<Conv> MakeConv(const ConvShape& s, dnnl::algorithm alg,
                                            const dnnl::engine& eng) {
  memory::desc src_any(SrcDims(s), Dt::f32, Tag::any);
  memory::desc wei_any(WeiDims(s), Dt::f32, Tag::any);
  memory::desc dst_any(DstDims(s), Dt::f32, Tag::any);
  const memory::dims strides = {s.stride_h, s.stride_w};
  const memory::dims dilates = {s.dil_h - 1, s.dil_w - 1};  // oneDNN counts from 0
  const memory::dims pad_l = {s.pad_top, s.pad_left};
  const memory::dims pad_r = {s.pad_bottom, s.pad_right};
  Conv conv;
  try {
    dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference, alg, src_any, wei_any,
                                         dst_any, strides, dilates, pad_l, pad_r);
    conv.pd = dnnl::convolution_forward::primitive_desc(desc, eng);
  } catch (const dnnl::error& e) {
    if (e.status == dnnl_unimplemented) {
      return absl::UnimplementedError(absl::StrCat("oneDNN has no ",
                                                   AlgName(static_cast<dnnl_alg_kind_t>(alg)),
                                                   " convolution for this shape: ", e.what()));
    }
    return FromDnnl(e, "primitive descriptor");
  }
  try {
    // With convolution_auto the primitive descriptor records the algorithm it
    // resolved to (direct or winograd).
    const dnnl_convolution_desc_t* cd = nullptr;
    std::string resolved = AlgName(static_cast<dnnl_alg_kind_t>(alg));
    if (dnnl_primitive_desc_query(conv.pd.get(), dnnl_query_convolution_d, 0, &cd) ==
            dnnl_success &&
        cd != nullptr) {
      resolved = AlgName(cd->alg_kind);
    }
    const std::string impl = conv.pd.impl_info_str();
    conv.name = alg == dnnl::algorithm::convolution_auto
                    ? absl::StrCat("auto->", resolved, ":", impl)
                    : absl::StrCat(resolved, ":", impl);
    conv.prim = dnnl::convolution_forward(conv.pd);
  } catch (const dnnl::error& e) {
    return FromDnnl(e, "primitive creation");
  }
  return conv;
}

// Returns `user` itself when it already has the wanted layout, else a new
// memory holding the reordered data.
memory ToLayout(const memory& user, const memory::desc& want, const dnnl::engine& eng,
                dnnl::stream& strm) {
  if (user.get_desc() == want) return user;
  memory out(want, eng);
  dnnl::reorder(user, out).execute(strm, const_cast<memory&>(user), out);
  strm.wait();
  return out;
}

void FillRandom(const memory& m, uint32_t seed) {
  float* p = static_cast<float*>(m.get_data_handle());
  const size_t count = m.get_desc().get_size() / sizeof(float);
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (size_t i = 0; i < count; ++i) p[i] = dist(gen);
}

[[nodiscard]] absl::StatusOr<double> TimeConv(const Conv& conv, const ConvShape& s,
                                              const dnnl::engine& eng, dnnl::stream& strm,
                                              double min_seconds) {
  try {
    memory user_src({SrcDims(s), Dt::f32, Tag::nchw}, eng);
    memory user_wei({WeiDims(s), Dt::f32, WeiPlainTag(s)}, eng);
    FillRandom(user_src, 1);
    FillRandom(user_wei, 2);
    // Reorders into the chosen layouts, once, outside the timing.
    memory src = ToLayout(user_src, conv.pd.src_desc(), eng, strm);
    memory wei = ToLayout(user_wei, conv.pd.weights_desc(), eng, strm);
    memory dst(conv.pd.dst_desc(), eng);
    std::unordered_map<int, memory> args = {
        {DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DST, dst}};
    for (int i = 0; i < kWarmupCalls; ++i) conv.prim.execute(strm, args);
    strm.wait();
    double best = std::numeric_limits<double>::infinity();
    using Clock = std::chrono::steady_clock;
    for (int rep = 0; rep < kRepeats; ++rep) {
      int64_t calls = 0;
      double elapsed = 0;
      const auto start = Clock::now();
      do {
        conv.prim.execute(strm, args);
        strm.wait();  // CPU streams execute synchronously; cheap.
        ++calls;
        elapsed = std::chrono::duration<double>(Clock::now() - start).count();
      } while (elapsed < min_seconds);
      best = std::min(best, elapsed / calls);
    }
    return best;
  } catch (const dnnl::error& e) {
    return FromDnnl(e, "execution");
  }
}

}  // namespace

int64_t ConvOutHeight(const ConvShape& s) {
  if (s.stride_h <= 0) return 0;
  const int64_t span = (s.r - 1) * s.dil_h + 1;
  const int64_t padded = s.h + s.pad_top + s.pad_bottom - span;
  return padded < 0 ? 0 : padded / s.stride_h + 1;
}

int64_t ConvOutWidth(const ConvShape& s) {
  if (s.stride_w <= 0) return 0;
  const int64_t span = (s.s - 1) * s.dil_w + 1;
  const int64_t padded = s.w + s.pad_left + s.pad_right - span;
  return padded < 0 ? 0 : padded / s.stride_w + 1;
}

double ConvFlops(const ConvShape& s) {
  const double in_per_group = s.depthwise ? 1.0 : static_cast<double>(s.c);
  return 2.0 * s.n * s.k * ConvOutHeight(s) * ConvOutWidth(s) * in_per_group * s.r * s.s;
}

[[nodiscard]] absl::Status ValidateConvShape(const ConvShape& s) {
  if (s.n <= 0 || s.c <= 0 || s.h <= 0 || s.w <= 0 || s.k <= 0 || s.r <= 0 || s.s <= 0) {
    return absl::InvalidArgumentError("conv shape: sizes must be positive");
  }
  if (s.stride_h <= 0 || s.stride_w <= 0 || s.dil_h <= 0 || s.dil_w <= 0) {
    return absl::InvalidArgumentError("conv shape: strides and dilations must be positive");
  }
  if (s.pad_top < 0 || s.pad_left < 0 || s.pad_bottom < 0 || s.pad_right < 0) {
    return absl::InvalidArgumentError("conv shape: padding must be non-negative");
  }
  if (ConvOutHeight(s) <= 0 || ConvOutWidth(s) <= 0) {
    return absl::InvalidArgumentError("conv shape: empty output");
  }
  if (s.depthwise && s.k != s.c) {
    return absl::InvalidArgumentError("conv shape: depthwise requires k == c");
  }
  return absl::OkStatus();
}

[[nodiscard]] absl::StatusOr<ReferenceTiming> OneDnnConvSeconds(const ConvShape& shape, int threads,
                                                                double min_seconds) {
  if (absl::Status st = ValidateConvShape(shape); !st.ok()) return st;
  if (threads < 1) return absl::InvalidArgumentError("threads must be >= 1");
  if (!(min_seconds >= 0)) return absl::InvalidArgumentError("min_seconds must be >= 0");
  OmpThreadScope omp_threads(threads);
  try {
    dnnl::engine eng(dnnl::engine::kind::cpu, 0);
    dnnl::stream strm(eng);
    ReferenceTiming best{std::numeric_limits<double>::infinity(), ""};
    std::vector<std::string> skipped;
    for (dnnl::algorithm alg :
         {dnnl::algorithm::convolution_direct, dnnl::algorithm::convolution_auto}) {
      absl::StatusOr<Conv> conv = MakeConv(shape, alg, eng);
      if (absl::IsUnimplemented(conv.status())) {
        skipped.push_back(std::string(conv.status().message()));
        continue;
      }
      if (!conv.ok()) return conv.status();
      absl::StatusOr<double> seconds = TimeConv(*conv, shape, eng, strm, min_seconds);
      if (!seconds.ok()) return seconds.status();
      if (*seconds < best.seconds) best = {*seconds, conv->name};
    }
    if (best.algorithm.empty()) {
      return absl::UnimplementedError(absl::StrCat("no oneDNN convolution for this shape: ",
                                                   skipped.empty() ? "" : skipped.front()));
    }
    return best;
  } catch (const dnnl::error& e) {
    return FromDnnl(e, "engine/stream");
  }
}

[[nodiscard]] absl::Status OneDnnConvForTest(const ConvShape& shape, const float* nchw_src,
                                             const float* oihw_weights, float* nchw_dst,
                                             int threads, bool use_auto) {
  if (absl::Status st = ValidateConvShape(shape); !st.ok()) return st;
  if (threads < 1) return absl::InvalidArgumentError("threads must be >= 1");
  OmpThreadScope omp_threads(threads);
  try {
    dnnl::engine eng(dnnl::engine::kind::cpu, 0);
    dnnl::stream strm(eng);
    absl::StatusOr<Conv> conv = MakeConv(
        shape, use_auto ? dnnl::algorithm::convolution_auto : dnnl::algorithm::convolution_direct,
        eng);
    if (!conv.ok()) return conv.status();
    // oneDNN's memory objects wrap the caller's buffers (it only reads src/weights).
    memory user_src({SrcDims(shape), Dt::f32, Tag::nchw}, eng, const_cast<float*>(nchw_src));
    memory user_wei({WeiDims(shape), Dt::f32, WeiPlainTag(shape)}, eng,
                    const_cast<float*>(oihw_weights));
    memory user_dst({DstDims(shape), Dt::f32, Tag::nchw}, eng, nchw_dst);
    memory src = ToLayout(user_src, conv->pd.src_desc(), eng, strm);
    memory wei = ToLayout(user_wei, conv->pd.weights_desc(), eng, strm);
    memory dst =
        conv->pd.dst_desc() == user_dst.get_desc() ? user_dst : memory(conv->pd.dst_desc(), eng);
    conv->prim.execute(strm, {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DST, dst}});
    strm.wait();
    if (dst != user_dst) {
      dnnl::reorder(dst, user_dst).execute(strm, dst, user_dst);
      strm.wait();
    }
    return absl::OkStatus();
  } catch (const dnnl::error& e) {
    return FromDnnl(e, "test run");
  }
}

}  // namespace bench
}  // namespace tunefleet
