// What the workload tests share: building argument objects, making a
// workload that must be valid, checking that bad arguments are rejected the
// same way by every workload, checking From(), and a brute-force NCHW
// convolution that the conv2d and depthwise tests compare their references
// to; and, for tests that run generated kernels, random inputs with the
// reference's outputs. Test-only (gtest assertions); include from
// *_test.cc files.
#ifndef TUNEFLEET_TUNER_CORE_WORKLOADS_WORKLOAD_TEST_UTIL_H_
#define TUNEFLEET_TUNER_CORE_WORKLOADS_WORKLOAD_TEST_UTIL_H_

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/types/span.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tuner_core/workloads/conv_args.h"
#include "tuner_core/workloads/workload.h"

namespace tunefleet {
namespace workload_test {

using nlohmann::json;

// `args` with every key of `extra` set (added or replaced).
json With(json args, const json& extra);
// `args` without `key`.
json Without(json args, const std::string& key);

// W::Make(args), failing the test (and returning null) when it is an error.
template <typename W>
std::unique_ptr<W> MakeOk(const json& args) {
  auto w = W::Make(args);
  EXPECT_TRUE(w.ok()) << args.dump() << ": " << w.status();
  return w.ok() ? std::move(w).value() : nullptr;
}

// Arguments that MakeWorkload() must reject, and a part of the message.
struct BadArgsCase {
  json args;
  const char* expected;
};

// Every case is InvalidArgument, its message starts with "<op>: " and
// contains the case's expected text.
void ExpectBadArgsNameTheKey(const std::string& op, absl::Span<const BadArgsCase> cases);

// W::From accepts `own` and rejects `other` with
// "<user>: workload <other's name> is not <own's name>". Returns the
// accepted workload, or null after a failure.
template <typename W>
const W* ExpectFromAcceptsOnly(const Workload& own, const Workload& other,
                               const std::string& user) {
  auto accepted = W::From(own, user);
  EXPECT_TRUE(accepted.ok()) << accepted.status();
  auto rejected = W::From(other, user);
  EXPECT_EQ(rejected.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(rejected.status().message(),
            user + ": workload " + other.name() + " is not " + own.name());
  return accepted.ok() ? *accepted : nullptr;
}

// Every tensor of a workload twice, in tensors() order: `kernel` for the
// kernel under test (outputs NaN until it writes them) and `reference` with
// the outputs the workload's reference computed; the inputs are the same
// in both.
struct ReferenceBuffers {
  std::vector<std::vector<float>> kernel, reference;

  // Pointers into `kernel`, the argument list of the kernel under test.
  std::vector<float*> KernelPointers();
};

// Inputs uniform in [-1, 1) drawn from `rng`, tensor by tensor.
ReferenceBuffers MakeReferenceBuffers(const Workload& workload, std::mt19937_64* rng);

// `count` floats uniform in [-1, 1).
std::vector<float> Random(int64_t count, std::mt19937* rng);

// |got - want| within 1e-5 relative (plus 1e-5 absolute).
void ExpectClose(float got, float want, const std::string& where);

// Every field of an NCHW convolution, written out by the tests rather than
// read back from the workload, so the brute force below is independent of
// it. For depthwise shapes k is the channel count.
struct ConvShape {
  int64_t n, c, h, w, k, r, s;
  int64_t stride_h = 1, stride_w = 1;
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  int64_t dil_h = 1, dil_w = 1;
};

// Every explicit key of `s`; "K" only when out_channels is kFromK.
json ConvArgsOf(const ConvShape& s, ConvOutChannels out_channels);

// Output size by counting window positions that fit in the padded input
// (no division formula).
int64_t CountPositions(int64_t in, int64_t pad_lo, int64_t pad_hi, int64_t kernel, int64_t dil,
                       int64_t stride);

// One output element [n, k, y, x] straight from the definition: over every
// input channel (kFromK, kernel [K, C, R, S]) or over channel k alone
// (kSameAsC, kernel [C, 1, R, S]).
float DirectConv(const ConvShape& s, ConvOutChannels out_channels, const std::vector<float>& data,
                 const std::vector<float>& kernel, int64_t n, int64_t k, int64_t y, int64_t x);

// Makes the workload of `s`, checks its output size against
// CountPositions, runs its reference on random data from `rng` and compares
// every output element with DirectConv.
void ExpectConvReferenceMatchesDirect(const ConvShape& s, ConvOutChannels out_channels,
                                      std::mt19937* rng);

}  // namespace workload_test
}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_WORKLOADS_WORKLOAD_TEST_UTIL_H_
