#include "bench/model_suites.h"

#include <array>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "tuner_core/models/model_zoo.h"
#include "tuner_core/workloads/conv_args.h"

namespace tunefleet {
namespace bench {
namespace {

using Json = nlohmann::json;

// Short text of a model task for the "skipping" line.
std::string ModelTaskText(const ModelTask& t) {
  if (t.workload == "dense") {
    return absl::StrFormat("dense(M=%d,N=%d,K=%d)", Arg(t.args, "M"), Arg(t.args, "N"),
                           Arg(t.args, "K"));
  }
  if (t.workload == "conv2d_nchw" || t.workload == "depthwise_conv2d_nchw") {
    BenchTask b;
    b.workload = t.workload;
    b.args = t.args;
    return ConvLabel(b);
  }
  return t.workload;
}

}  // namespace

int64_t Arg(const Json& args, const char* key) { return args.at(key).get<int64_t>(); }

std::string ConvLabel(const BenchTask& t) {
  const Json& a = t.args;
  const bool depthwise = t.workload == "depthwise_conv2d_nchw";
  std::string label =
      depthwise ? absl::StrFormat("dwconv(C=%d,H=%d,W=%d", Arg(a, "C"), Arg(a, "H"), Arg(a, "W"))
                : absl::StrFormat("conv2d(C=%d,H=%d,W=%d,K=%d", Arg(a, "C"), Arg(a, "H"),
                                  Arg(a, "W"), Arg(a, "K"));
  absl::StrAppendFormat(&label, ",%dx%d", Arg(a, "R"), Arg(a, "S"));
  if (Arg(a, "stride_h") == Arg(a, "stride_w")) {
    absl::StrAppendFormat(&label, ",s%d", Arg(a, "stride_h"));
  } else {
    absl::StrAppendFormat(&label, ",s%dx%d", Arg(a, "stride_h"), Arg(a, "stride_w"));
  }
  const int64_t pt = Arg(a, "pad_top"), pl = Arg(a, "pad_left"), pb = Arg(a, "pad_bottom"),
                pr = Arg(a, "pad_right");
  if (pt == pl && pt == pb && pt == pr) {
    absl::StrAppendFormat(&label, ",p%d", pt);
  } else {
    absl::StrAppendFormat(&label, ",p%d/%d/%d/%d", pt, pl, pb, pr);
  }
  if (Arg(a, "dil_h") != 1 || Arg(a, "dil_w") != 1) {
    absl::StrAppendFormat(&label, ",d%dx%d", Arg(a, "dil_h"), Arg(a, "dil_w"));
  }
  return label + ")";
}

namespace {

// The share of one spatial axis's taps (output position x kernel tap) that
// read inside the input rather than its padding; `out` output positions.
double InsideShare(int64_t in, int64_t taps, int64_t stride, int64_t pad, int64_t dilation,
                   int64_t out) {
  int64_t inside = 0;
  for (int64_t o = 0; o < out; ++o) {
    for (int64_t t = 0; t < taps; ++t) {
      const int64_t x = o * stride - pad + t * dilation;
      inside += x >= 0 && x < in;
    }
  }
  return out > 0 && taps > 0 ? static_cast<double>(inside) / static_cast<double>(out * taps) : 1.0;
}

}  // namespace

[[nodiscard]] absl::StatusOr<Suite> ModelSuite(const std::string& name, const std::string& model,
                                               const std::string& workload,
                                               const std::string& layout) {
  absl::StatusOr<std::vector<ModelTask>> tasks = ModelTasks(model);
  if (!tasks.ok()) return tasks.status();
  Suite suite{name, model, "oneDNN", {}, Json::array()};
  for (const ModelTask& t : *tasks) {
    if (t.workload != workload) {
      suite.skipped.push_back({{"workload", t.workload},
                               {"args", t.args},
                               {"num_layers", t.num_layers},
                               {"flops", t.flops},
                               {"flops_share", t.flops_share},
                               {"text", ModelTaskText(t)}});
      continue;
    }
    BenchTask b;
    b.workload = t.workload;
    b.args = t.args;
    b.args["layout"] = layout;
    b.num_layers = t.num_layers;
    b.flops = t.flops;
    b.flops_share = t.flops_share;
    absl::StatusOr<ConvArgs> conv =
        ParseConvArgs(b.workload, b.args,
                      b.workload == "depthwise_conv2d_nchw" ? ConvOutChannels::kSameAsC
                                                            : ConvOutChannels::kFromK);
    if (!conv.ok()) return conv.status();
    b.useful_flops =
        b.flops *
        InsideShare(conv->h, conv->r, conv->stride_h, conv->pad_top, conv->dil_h, conv->out_h) *
        InsideShare(conv->w, conv->s, conv->stride_w, conv->pad_left, conv->dil_w, conv->out_w);
    b.label = ConvLabel(b);
    suite.tasks.push_back(std::move(b));
  }
  return suite;
}

std::string SkippedTasksNote(const Suite& suite) {
  if (suite.skipped.empty()) return "";
  std::vector<std::string> names;
  int layers = 0;
  double share = 0;
  for (const Json& skipped : suite.skipped) {
    names.push_back(skipped["text"].get<std::string>());
    layers += skipped["num_layers"].get<int>();
    share += skipped["flops_share"].get<double>();
  }
  return absl::StrFormat(
      "[%s] skipping %s (%d layer(s), %.2f%% of %s's FLOPs): only its %s tasks are benchmarked",
      suite.name,
      names.size() <= 2 ? absl::StrJoin(names, ", ") : absl::StrCat(names.size(), " other tasks"),
      layers, 100 * share, suite.model, suite.tasks.empty() ? "" : suite.tasks[0].workload);
}

Suite BatchMatmulSuite() {
  Suite suite{"batch_matmul", "", "OpenBLAS", {}, Json::array()};
  for (auto [b, m, n, k] :
       std::vector<std::array<int64_t, 4>>{{12, 128, 128, 64}, {12, 128, 64, 128}}) {
    BenchTask t;
    t.workload = "batch_matmul";
    t.args = {{"B", b}, {"M", m}, {"N", n}, {"K", k}, {"layout", "NK"}};
    t.flops = 2.0 * b * m * n * k;
    t.label = absl::StrFormat("batch_matmul(B=%d,M=%d,N=%d,K=%d,NK)", b, m, n, k);
    suite.tasks.push_back(std::move(t));
  }
  return suite;
}

[[nodiscard]] absl::StatusOr<Suite> NamedSuite(absl::string_view name, const std::string& layout) {
  if (name == "resnet18") return ModelSuite("resnet18", "resnet-18", "conv2d_nchw", layout);
  if (name == "resnet50") return ModelSuite("resnet50", "resnet-50", "conv2d_nchw", layout);
  if (name == "mobilenet_dw") {
    return ModelSuite("mobilenet_dw", "mobilenet-v2", "depthwise_conv2d_nchw", layout);
  }
  if (name == "mobilenet_conv") {
    return ModelSuite("mobilenet_conv", "mobilenet-v2", "conv2d_nchw", layout);
  }
  if (name == "batch_matmul") return BatchMatmulSuite();
  return absl::InvalidArgumentError(
      absl::StrCat("--suites: unknown suite \"", name,
                   "\" (known: resnet18, resnet50, mobilenet_conv, mobilenet_dw, batch_matmul)"));
}

}  // namespace bench
}  // namespace tunefleet
