#include "tuner_core/workloads/workload_test_util.h"

#include <cmath>

#include "absl/strings/str_cat.h"

namespace tunefleet {
namespace workload_test {

json With(json args, const json& extra) {
  for (auto it = extra.begin(); it != extra.end(); ++it) args[it.key()] = it.value();
  return args;
}

json Without(json args, const std::string& key) {
  args.erase(key);
  return args;
}

void ExpectBadArgsNameTheKey(const std::string& op, absl::Span<const BadArgsCase> cases) {
  for (const BadArgsCase& c : cases) {
    auto w = MakeWorkload(op, c.args);
    ASSERT_FALSE(w.ok()) << c.args.dump();
    EXPECT_EQ(w.status().code(), absl::StatusCode::kInvalidArgument) << w.status();
    EXPECT_EQ(w.status().message().rfind(op + ": ", 0), 0u) << w.status();
    EXPECT_NE(w.status().message().find(c.expected), std::string::npos)
        << w.status() << "\nexpected to contain: " << c.expected;
  }
}

std::vector<float*> ReferenceBuffers::KernelPointers() {
  std::vector<float*> pointers;
  for (std::vector<float>& buffer : kernel) pointers.push_back(buffer.data());
  return pointers;
}

ReferenceBuffers MakeReferenceBuffers(const Workload& workload, std::mt19937_64* rng) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  ReferenceBuffers buffers;
  for (const TensorArg& t : workload.tensors()) {
    buffers.kernel.emplace_back(t.NumElements(), std::nanf(""));
    if (!t.is_output) {
      for (float& v : buffers.kernel.back()) v = dist(*rng);
    }
    buffers.reference.push_back(buffers.kernel.back());
  }
  std::vector<float*> reference_pointers;
  for (std::vector<float>& buffer : buffers.reference) reference_pointers.push_back(buffer.data());
  workload.ComputeReference(reference_pointers);
  return buffers;
}

std::vector<float> Random(int64_t count, std::mt19937* rng) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(count);
  for (float& x : v) x = dist(*rng);
  return v;
}

void ExpectClose(float got, float want, const std::string& where) {
  EXPECT_NEAR(got, want, 1e-5 * (1.0 + std::fabs(want))) << where;
}

json ConvArgsOf(const ConvShape& s, ConvOutChannels out_channels) {
  json args = {{"N", s.n},
               {"C", s.c},
               {"H", s.h},
               {"W", s.w},
               {"R", s.r},
               {"S", s.s},
               {"stride_h", s.stride_h},
               {"stride_w", s.stride_w},
               {"pad_top", s.pad_top},
               {"pad_left", s.pad_left},
               {"pad_bottom", s.pad_bottom},
               {"pad_right", s.pad_right},
               {"dil_h", s.dil_h},
               {"dil_w", s.dil_w}};
  if (out_channels == ConvOutChannels::kFromK) args["K"] = s.k;
  return args;
}

int64_t CountPositions(int64_t in, int64_t pad_lo, int64_t pad_hi, int64_t kernel, int64_t dil,
                       int64_t stride) {
  int64_t count = 0;
  for (int64_t start = 0; start + dil * (kernel - 1) < in + pad_lo + pad_hi; start += stride) {
    ++count;
  }
  return count;
}

float DirectConv(const ConvShape& s, ConvOutChannels out_channels, const std::vector<float>& data,
                 const std::vector<float>& kernel, int64_t n, int64_t k, int64_t y, int64_t x) {
  // Depthwise is the grouped case with one input channel per group.
  const bool depthwise = out_channels == ConvOutChannels::kSameAsC;
  const int64_t c_begin = depthwise ? k : 0;
  const int64_t group_channels = depthwise ? 1 : s.c;
  double acc = 0;
  for (int64_t g = 0; g < group_channels; ++g) {
    const int64_t c = c_begin + g;
    for (int64_t r = 0; r < s.r; ++r) {
      for (int64_t q = 0; q < s.s; ++q) {
        const int64_t ih = y * s.stride_h - s.pad_top + r * s.dil_h;
        const int64_t iw = x * s.stride_w - s.pad_left + q * s.dil_w;
        if (ih < 0 || ih >= s.h || iw < 0 || iw >= s.w) continue;
        acc += static_cast<double>(data[((n * s.c + c) * s.h + ih) * s.w + iw]) *
               kernel[((k * group_channels + g) * s.r + r) * s.s + q];
      }
    }
  }
  return static_cast<float>(acc);
}

void ExpectConvReferenceMatchesDirect(const ConvShape& s, ConvOutChannels out_channels,
                                      std::mt19937* rng) {
  const bool depthwise = out_channels == ConvOutChannels::kSameAsC;
  const json args = ConvArgsOf(s, out_channels);
  auto w = MakeWorkload(depthwise ? "depthwise_conv2d_nchw" : "conv2d_nchw", args);
  ASSERT_TRUE(w.ok()) << args.dump() << ": " << w.status();
  const int64_t oh = CountPositions(s.h, s.pad_top, s.pad_bottom, s.r, s.dil_h, s.stride_h);
  const int64_t ow = CountPositions(s.w, s.pad_left, s.pad_right, s.s, s.dil_w, s.stride_w);
  const int64_t group_channels = depthwise ? 1 : s.c;
  ASSERT_EQ((*w)->tensors()[2].shape, (std::vector<int64_t>{s.n, s.k, oh, ow})) << args.dump();
  ASSERT_EQ((*w)->flops(), 2.0 * s.n * s.k * oh * ow * group_channels * s.r * s.s);
  std::vector<float> data = Random(s.n * s.c * s.h * s.w, rng);
  std::vector<float> kernel = Random(s.k * group_channels * s.r * s.s, rng);
  std::vector<float> out(s.n * s.k * oh * ow, NAN);
  (*w)->ComputeReference({data.data(), kernel.data(), out.data()});
  for (int64_t n = 0; n < s.n; ++n) {
    for (int64_t k = 0; k < s.k; ++k) {
      for (int64_t y = 0; y < oh; ++y) {
        for (int64_t x = 0; x < ow; ++x) {
          ExpectClose(out[((n * s.k + k) * oh + y) * ow + x],
                      DirectConv(s, out_channels, data, kernel, n, k, y, x),
                      absl::StrCat(args.dump(), " at ", n, ",", k, ",", y, ",", x));
        }
      }
    }
  }
}

}  // namespace workload_test
}  // namespace tunefleet
