#include "bench/model_references.h"

#include <cmath>
#include <cstdio>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "bench/bench_util.h"
#include "bench/onednn_reference.h"

namespace tunefleet {
namespace bench {

using Json = nlohmann::json;

Reference OneDnnReference(const BenchTask& t, int threads, double min_seconds) {
  const Json& a = t.args;
  ConvShape s;
  s.n = Arg(a, "N"), s.c = Arg(a, "C"), s.h = Arg(a, "H"), s.w = Arg(a, "W");
  s.depthwise = t.workload == "depthwise_conv2d_nchw";
  s.k = s.depthwise ? s.c : Arg(a, "K");
  s.r = Arg(a, "R"), s.s = Arg(a, "S");
  s.stride_h = Arg(a, "stride_h"), s.stride_w = Arg(a, "stride_w");
  s.pad_top = Arg(a, "pad_top"), s.pad_left = Arg(a, "pad_left");
  s.pad_bottom = Arg(a, "pad_bottom"), s.pad_right = Arg(a, "pad_right");
  s.dil_h = Arg(a, "dil_h"), s.dil_w = Arg(a, "dil_w");
  Reference ref;
  absl::StatusOr<ReferenceTiming> timing = OneDnnConvSeconds(s, threads, min_seconds);
  if (!timing.ok()) {
    ref.detail = std::string(timing.status().message());
    ref.json = {{"error", ref.detail}};
    return ref;
  }
  if (std::abs(ConvFlops(s) - t.flops) > 1e-6 * t.flops) {
    std::fprintf(stderr, "warning: %s: oneDNN counts %.0f FLOPs, the model zoo %.0f\n",
                 t.label.c_str(), ConvFlops(s), t.flops);
  }
  ref.seconds = timing->seconds;
  ref.detail = timing->algorithm;
  ref.json = {
      {"seconds", ref.seconds}, {"gflops", t.flops / ref.seconds / 1e9}, {"algorithm", ref.detail}};
  return ref;
}

Reference OpenBlasReference(const BenchTask& t, int threads, const std::string& coretype,
                            double min_seconds) {
  auto run = [&](const std::string& core) {
    return RunJsonCommand(
        absl::StrCat(core.empty() ? "" : absl::StrCat("OPENBLAS_CORETYPE=", core, " "), ExeDir(),
                     "/openblas_batch_matmul_seconds ", Arg(t.args, "B"), " ", Arg(t.args, "M"),
                     " ", Arg(t.args, "N"), " ", Arg(t.args, "K"), " ", threads, " ", min_seconds,
                     " ", t.args.at("layout").get<std::string>()));
  };
  Reference ref;
  const Json shipped = run("");
  const Json forced = coretype.empty() ? Json() : run(coretype);
  ref.json = {{"as_shipped", shipped}, {"coretype_forced", coretype}, {"with_coretype", forced}};
  for (const Json* j : {&shipped, &forced}) {
    if (!j->is_object() || !j->contains("seconds")) continue;
    const double seconds = (*j)["seconds"].get<double>();
    if (ref.seconds == 0 || seconds < ref.seconds) {
      ref.seconds = seconds;
      ref.detail = absl::StrCat((*j)["coretype"].get<std::string>(),
                                j == &forced ? " forced" : " as shipped");
    }
  }
  if (ref.seconds > 0) {
    ref.json["seconds"] = ref.seconds;
    ref.json["gflops"] = t.flops / ref.seconds / 1e9;
    ref.json["used"] = ref.detail;
  } else {
    ref.detail = "failed";
    ref.json["error"] = "no OpenBLAS run succeeded";
  }
  return ref;
}

}  // namespace bench
}  // namespace tunefleet
