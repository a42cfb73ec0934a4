#include "bench/model_references.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "bench/bench_util.h"
#include "bench/onednn_reference.h"
#include "common/median.h"
#include "local/local_measurer.h"
#include "tuner_core/templates/task.h"

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

double RemeasureWinner(const BenchTask& t, const std::string& target, const Json& config_json,
                       int threads, double min_seconds, std::string* error) {
  absl::StatusOr<std::unique_ptr<Task>> task = Task::Make("", t.workload, t.args, target);
  if (!task.ok()) {
    *error = std::string(task.status().message());
    return 0;
  }
  absl::StatusOr<Config> config = (*task)->space().FromJson(config_json);
  if (!config.ok()) {
    *error = std::string(config.status().message());
    return 0;
  }
  LocalMeasurerOptions options;
  options.runner.num_threads = threads;
  options.measure.number = 1;
  options.measure.repeat = 3;
  options.measure.min_repeat_ms = static_cast<int>(std::ceil(min_seconds * 1e3));
  options.measure.cooldown_interval_s = 0;
  options.measure.timeout_s = std::max(10.0, 3 * min_seconds + 10.0);
  absl::StatusOr<std::unique_ptr<LocalMeasurer>> measurer = LocalMeasurer::Create(**task, options);
  if (!measurer.ok()) {
    *error = std::string(measurer.status().message());
    return 0;
  }
  std::vector<MeasureResult> result = (*measurer)->Measure({*config});
  if (result.empty() || !result[0].ok() || result[0].costs.empty()) {
    *error = result.empty() ? "no result" : result[0].error_msg;
    return 0;
  }
  return *std::min_element(result[0].costs.begin(), result[0].costs.end());
}

Interleaved MeasureInterleaved(const std::function<double(std::string* error)>& ours,
                               const std::function<Reference()>& reference, int rounds) {
  Interleaved m;
  std::vector<Reference> successes;
  for (int round = 0; round < std::max(1, rounds); ++round) {
    if (ours) {
      std::string error;
      const double seconds = ours(&error);
      if (seconds > 0) {
        m.ours_rounds.push_back(seconds);
      } else {
        m.ours_error = error;
        ++m.ours_failed_rounds;
      }
    }
    Reference r = reference();
    if (r.seconds > 0) {
      m.reference_rounds.push_back(r.seconds);
      successes.push_back(std::move(r));
    } else {
      if (successes.empty()) m.reference = std::move(r);  // the failure, unless a round succeeds
      ++m.reference_failed_rounds;
    }
  }
  if (!m.ours_rounds.empty()) m.ours_seconds = Median(m.ours_rounds);
  if (!successes.empty()) {
    // The median round's details (algorithm, core type); with an even count
    // the lower middle's, its seconds the median of all.
    std::sort(successes.begin(), successes.end(),
              [](const Reference& a, const Reference& b) { return a.seconds < b.seconds; });
    m.reference = successes[(successes.size() - 1) / 2];
    m.reference.seconds = Median(m.reference_rounds);
    m.reference.json["seconds"] = m.reference.seconds;
    m.reference.json["rounds_seconds"] = m.reference_rounds;
    m.reference.json["failed_rounds"] = m.reference_failed_rounds;
  }
  return m;
}

}  // namespace bench
}  // namespace tunefleet
