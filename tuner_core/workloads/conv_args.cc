#include "tuner_core/workloads/conv_args.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "tuner_core/workloads/json_args.h"

namespace tunefleet {
namespace {

using json_args::kMaxDim;

// Reads a (height, width) pair given either as `shorthand` (an int or [h, w])
// or as the explicit keys, never both.
[[nodiscard]] absl::Status ReadPair(const std::string& op, const nlohmann::json& args,
                                    const std::string& shorthand, const std::string& key_h,
                                    const std::string& key_w, int64_t default_value, int64_t min,
                                    int64_t* h, int64_t* w) {
  if (!json_args::Has(args, shorthand)) {
    TF_ASSIGN_OR_RETURN(*h,
                        json_args::ReadOptionalInt(op, args, key_h, default_value, min, kMaxDim));
    TF_ASSIGN_OR_RETURN(*w,
                        json_args::ReadOptionalInt(op, args, key_w, default_value, min, kMaxDim));
    return absl::OkStatus();
  }
  for (const std::string& key : {key_h, key_w}) {
    if (json_args::Has(args, key)) {
      return absl::InvalidArgumentError(absl::StrCat(op, ": give either \"", shorthand, "\" or \"",
                                                     key_h, "\"/\"", key_w, "\", not both (got \"",
                                                     shorthand, "\" and \"", key, "\")"));
    }
  }
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> v,
                      json_args::ReadIntOrList(op, args, shorthand, {1, 2}, min, kMaxDim));
  *h = v.front();
  *w = v.back();
  return absl::OkStatus();
}

// Reads the four paddings from "padding" (p, [h, w] or [top, left, bottom,
// right], TVM's order) or from the explicit keys, never both.
[[nodiscard]] absl::Status ReadPadding(const std::string& op, const nlohmann::json& args,
                                       ConvArgs* a) {
  static const char* const kKeys[] = {"pad_top", "pad_left", "pad_bottom", "pad_right"};
  int64_t* const fields[] = {&a->pad_top, &a->pad_left, &a->pad_bottom, &a->pad_right};
  if (!json_args::Has(args, "padding")) {
    for (int i = 0; i < 4; ++i) {
      TF_ASSIGN_OR_RETURN(*fields[i],
                          json_args::ReadOptionalInt(op, args, kKeys[i], 0, 0, kMaxDim));
    }
    return absl::OkStatus();
  }
  for (const char* key : kKeys) {
    if (json_args::Has(args, key)) {
      return absl::InvalidArgumentError(
          absl::StrCat(op,
                       ": give either \"padding\" or \"pad_top\"/\"pad_left\"/\"pad_bottom\"/"
                       "\"pad_right\", not both (got \"padding\" and \"",
                       key, "\")"));
    }
  }
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> v,
                      json_args::ReadIntOrList(op, args, "padding", {1, 2, 4}, 0, kMaxDim));
  if (v.size() == 1) v = {v[0], v[0], v[0], v[0]};
  if (v.size() == 2) v = {v[0], v[1], v[0], v[1]};
  for (int i = 0; i < 4; ++i) *fields[i] = v[i];
  return absl::OkStatus();
}

// Key names of one spatial axis, for messages.
struct AxisNames {
  const char* size;
  const char* kernel;
  const char* pad_lo;
  const char* pad_hi;
  const char* dil;
  const char* noun;    // "height"
  const char* output;  // "rows"
};
constexpr AxisNames kRows = {"H", "R", "pad_top", "pad_bottom", "dil_h", "height", "rows"};
constexpr AxisNames kCols = {"W", "S", "pad_left", "pad_right", "dil_w", "width", "columns"};

// Checks the paddings of one axis against the dilated kernel extent and
// returns its output size.
[[nodiscard]] absl::StatusOr<int64_t> OutputSize(const std::string& op, const AxisNames& names,
                                                 int64_t size, int64_t kernel, int64_t stride,
                                                 int64_t pad_lo, int64_t pad_hi, int64_t dil,
                                                 bool padding_shorthand) {
  const int64_t extent = dil * (kernel - 1) + 1;
  const std::string kernel_desc =
      absl::StrCat("dilated kernel ", names.noun, " ", extent, " (", names.kernel, "=", kernel,
                   ", ", names.dil, "=", dil, ")");
  // A pad reaching a whole extent would only add outputs that see nothing
  // but padding.
  for (auto [key, pad] : {std::pair<const char*, int64_t>{names.pad_lo, pad_lo},
                          std::pair<const char*, int64_t>{names.pad_hi, pad_hi}}) {
    if (pad >= extent) {
      return absl::InvalidArgumentError(absl::StrCat(op, ": ", key, " = ", pad,
                                                     padding_shorthand ? " (from \"padding\")" : "",
                                                     " must be less than the ", kernel_desc));
    }
  }
  // Checked before dividing: C++ division truncates toward zero, which would
  // turn a slightly negative span into one output.
  const int64_t span = size + pad_lo + pad_hi - extent;
  if (span < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": no output ", names.output, ": padded input ", names.noun, " ",
                     size + pad_lo + pad_hi, " (", names.size, "=", size, " + ", names.pad_lo, "=",
                     pad_lo, " + ", names.pad_hi, "=", pad_hi, ") is less than the ", kernel_desc));
  }
  return span / stride + 1;
}

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }  // a >= 0, b > 0

}  // namespace

[[nodiscard]] absl::StatusOr<ConvArgs> ParseConvArgs(const std::string& op,
                                                     const nlohmann::json& args,
                                                     ConvOutChannels out_channels) {
  const bool with_k = out_channels == ConvOutChannels::kFromK;
  std::vector<std::string> accepted = {"N", "C", "H", "W"};
  if (with_k) {
    accepted.push_back("K");
    accepted.push_back("group");
    accepted.push_back("in_block");
  }
  for (const char* key :
       {"R", "S", "stride_h", "stride_w", "pad_top", "pad_left", "pad_bottom", "pad_right", "dil_h",
        "dil_w", "layout", "stride", "padding", "dilation"}) {
    accepted.push_back(key);
  }
  TF_RETURN_IF_ERROR(json_args::CheckObjectWithKeys(op, args, accepted));

  ConvArgs a;
  TF_ASSIGN_OR_RETURN(a.n, json_args::ReadInt(op, args, "N", 1, kMaxDim));
  TF_ASSIGN_OR_RETURN(a.c, json_args::ReadInt(op, args, "C", 1, kMaxDim));
  TF_ASSIGN_OR_RETURN(a.h, json_args::ReadInt(op, args, "H", 1, kMaxDim));
  TF_ASSIGN_OR_RETURN(a.w, json_args::ReadInt(op, args, "W", 1, kMaxDim));
  if (with_k) {
    TF_ASSIGN_OR_RETURN(a.k, json_args::ReadInt(op, args, "K", 1, kMaxDim));
    TF_ASSIGN_OR_RETURN(a.group, json_args::ReadOptionalInt(op, args, "group", 1, 1, kMaxDim));
    if (a.c % a.group != 0 || a.k % a.group != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(op, ": group=", a.group, " does not divide C=", a.c, " and K=", a.k));
    }
  } else {
    a.k = a.c;
  }
  TF_ASSIGN_OR_RETURN(a.r, json_args::ReadInt(op, args, "R", 1, kMaxConvKernelDim));
  TF_ASSIGN_OR_RETURN(a.s, json_args::ReadInt(op, args, "S", 1, kMaxConvKernelDim));
  TF_RETURN_IF_ERROR(
      ReadPair(op, args, "stride", "stride_h", "stride_w", 1, 1, &a.stride_h, &a.stride_w));
  TF_RETURN_IF_ERROR(ReadPair(op, args, "dilation", "dil_h", "dil_w", 1, 1, &a.dil_h, &a.dil_w));
  TF_RETURN_IF_ERROR(ReadPadding(op, args, &a));
  TF_ASSIGN_OR_RETURN(std::string layout,
                      json_args::ReadChoice(op, args, "layout", "NCHW", {"NCHW", "NCHWc"}));
  a.layout_nchwc = layout == "NCHWc";
  if (with_k && json_args::Has(args, "in_block")) {
    TF_ASSIGN_OR_RETURN(a.in_block, json_args::ReadInt(op, args, "in_block", 1, kMaxDim));
    if (!a.layout_nchwc) {
      return absl::InvalidArgumentError(
          absl::StrCat(op, ": in_block is for the NCHWc layout, whose input arrives blocked"));
    }
    if (a.c % a.in_block != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(op, ": in_block=", a.in_block, " does not divide C=", a.c));
    }
  }

  const bool padding_shorthand = json_args::Has(args, "padding");
  TF_ASSIGN_OR_RETURN(a.out_h, OutputSize(op, kRows, a.h, a.r, a.stride_h, a.pad_top, a.pad_bottom,
                                          a.dil_h, padding_shorthand));
  TF_ASSIGN_OR_RETURN(a.out_w, OutputSize(op, kCols, a.w, a.s, a.stride_w, a.pad_left, a.pad_right,
                                          a.dil_w, padding_shorthand));
  return a;
}

nlohmann::json CanonicalConvArgs(const ConvArgs& a, ConvOutChannels out_channels) {
  nlohmann::json j = {{"N", a.n},
                      {"C", a.c},
                      {"H", a.h},
                      {"W", a.w},
                      {"R", a.r},
                      {"S", a.s},
                      {"stride_h", a.stride_h},
                      {"stride_w", a.stride_w},
                      {"pad_top", a.pad_top},
                      {"pad_left", a.pad_left},
                      {"pad_bottom", a.pad_bottom},
                      {"pad_right", a.pad_right},
                      {"dil_h", a.dil_h},
                      {"dil_w", a.dil_w},
                      {"layout", a.layout_nchwc ? "NCHWc" : "NCHW"}};
  if (out_channels == ConvOutChannels::kFromK) j["K"] = a.k;
  // Only where grouped, so every ungrouped workload keeps its key and records.
  if (a.group != 1) j["group"] = a.group;
  if (a.in_block != 0) j["in_block"] = a.in_block;  // likewise
  return j;
}

namespace {

// The outputs [begin, end) of an axis (`out` long) whose input index
// o*stride + offset lies in [0, in); begin <= end.
std::pair<int64_t, int64_t> InBoundsOutputs(int64_t in, int64_t out, int64_t stride,
                                            int64_t offset) {
  const int64_t begin = offset >= 0 ? 0 : CeilDiv(-offset, stride);
  const int64_t last = in - 1 - offset;  // largest o*stride in bounds
  const int64_t end = last < 0 ? 0 : std::min(out, last / stride + 1);
  return {std::min(begin, end), end};
}

// Along one axis: the (output, tap) pairs whose tap reads inside the input,
// over all out*taps pairs.
double LiveAxisShare(int64_t in, int64_t out, int64_t taps, int64_t stride, int64_t dil,
                     int64_t pad) {
  int64_t live = 0;
  for (int64_t t = 0; t < taps; ++t) {
    const auto [begin, end] = InBoundsOutputs(in, out, stride, t * dil - pad);
    live += end - begin;
  }
  return static_cast<double>(live) / static_cast<double>(out * taps);
}

}  // namespace

double LiveTapShare(const ConvArgs& a) {
  return LiveAxisShare(a.h, a.out_h, a.r, a.stride_h, a.dil_h, a.pad_top) *
         LiveAxisShare(a.w, a.out_w, a.s, a.stride_w, a.dil_w, a.pad_left);
}

ConvRowAccumulator::ConvRowAccumulator(const ConvArgs& a) : a_(a) {
  for (int64_t s = 0; s < a.s; ++s) {
    const int64_t offset = s * a.dil_w - a.pad_left;
    const auto [begin, end] = InBoundsOutputs(a.w, a.out_w, a.stride_w, offset);
    ow_begin_.push_back(begin);
    ow_end_.push_back(end);
    iw_offset_.push_back(offset);
  }
}

void ConvRowAccumulator::Accumulate(const float* in, const float* filter, int64_t oh,
                                    double* acc) const {
  const int64_t stride_w = a_.stride_w;
  for (int64_t r = 0; r < a_.r; ++r) {
    const int64_t ih = oh * a_.stride_h - a_.pad_top + r * a_.dil_h;
    if (ih < 0 || ih >= a_.h) continue;
    const float* in_row = in + ih * a_.w;
    for (int64_t s = 0; s < a_.s; ++s) {
      const double f = filter[r * a_.s + s];
      const int64_t offset = iw_offset_[s];
      const int64_t end = ow_end_[s];
      // Unit input stride gets its own loop so the compiler can vectorise it.
      if (stride_w == 1) {
        for (int64_t ow = ow_begin_[s]; ow < end; ++ow) acc[ow] += f * in_row[ow + offset];
      } else {
        for (int64_t ow = ow_begin_[s]; ow < end; ++ow) {
          acc[ow] += f * in_row[ow * stride_w + offset];
        }
      }
    }
  }
}

}  // namespace tunefleet
