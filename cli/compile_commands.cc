#include "cli/compile_commands.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/median.h"
#include "common/status_macros.h"
#include "compiler/npy.h"
#include "compiler/operator_table.h"
#include "compiler/runtime/model_runtime.h"
#include "compiler/runtime/step_profile.h"
#include "toolchain/codegen/target.h"

namespace tunefleet {
namespace {

// The median of each step's samples (by plan step index).
std::vector<double> MedianEach(const std::vector<std::vector<double>>& samples) {
  std::vector<double> medians;
  for (const std::vector<double>& v : samples) medians.push_back(Median(v));
  return medians;
}

}  // namespace

void RunOperatorsCommand(std::ostream& out) {
  for (const OperatorInfo& info : OperatorTable()) {
    const char* how = "";
    switch (info.lowering) {
      case OpLowering::kTunedKernel:
        how = "tuned kernel";
        break;
      case OpLowering::kPool:
        how = "pooling, any channel block";
        break;
      case OpLowering::kAdd:
        how = "elementwise, any layout (broadcasting: plain)";
        break;
      case OpLowering::kPointwise:
        how = "pointwise, any layout, fuses into kernel epilogues";
        break;
      case OpLowering::kTensorOp:
        how = "tensor operator, plain layout";
        break;
      case OpLowering::kAlias:
        how = "alias of its input";
        break;
      case OpLowering::kSplit:
        how = "strided copies, plain layout";
        break;
      case OpLowering::kConstant:
        how = "folded at compile time";
        break;
    }
    out << info.op_type << "\t" << how << "\tattributes: "
        << (info.attributes.empty() ? std::string("none") : absl::StrJoin(info.attributes, ", "))
        << (info.note.empty() ? "" : "\t") << info.note << "\n";
  }
}

[[nodiscard]] absl::Status RunCompileCommand(const CompileOptions& given, std::ostream& out) {
  CompileOptions options = given;
  if (options.target.empty()) options.target = HostTargetString();
  TF_ASSIGN_OR_RETURN(CompileReport report, CompileModel(options));
  for (const std::string& warning : report.warnings) out << "warning: " << warning << "\n";
  for (const std::string& layer : report.layers) out << "  " << layer << "\n";
  for (const std::string& note : report.layout_choices)
    out << "layout-aware choice: " << note << "\n";
  out << absl::StrFormat(
      "compiled %s for '%s': %d kernels, %d layers from records, %d on default configs, %.1f s\n",
      options.model, options.target, report.kernels, report.tuned_layers, report.default_layers,
      report.seconds);
  out << "wrote " << report.library << " and " << report.archive << " (to link statically)\n";
  return absl::OkStatus();
}

[[nodiscard]] absl::StatusOr<ModelRun> RunModelCommand(const RunModelOptions& options,
                                                       std::ostream& out) {
  TF_ASSIGN_OR_RETURN(std::unique_ptr<CompiledModel> model, CompiledModel::Open(options.model));
  if (model->inputs().size() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("run feeds one input; the model has ", model->inputs().size()));
  }
  model->SetThreads(std::max(1, options.threads));
  const PlanTensor& input = model->inputs()[0];
  int64_t input_elements = 1;
  for (int64_t d : input.shape) input_elements *= d;
  const bool integers = input.type != ElementType::kFloat32;
  FloatTensor x{input.shape, std::vector<float>(integers ? 0 : input_elements, 0.0f),
                std::vector<int64_t>(integers ? input_elements : 0, 0)};
  if (!options.input.empty()) {
    TF_ASSIGN_OR_RETURN(x, ReadTensorFile(options.input));
    const int64_t got = static_cast<int64_t>(integers ? x.ints.size() : x.data.size());
    if (got != input_elements || (!x.shape.empty() && x.shape != input.shape)) {
      return absl::InvalidArgumentError(
          absl::StrCat(options.input, " holds ", x.data.size() + x.ints.size(), " ",
                       x.ints.empty() ? "floats" : "integers", " of shape [",
                       absl::StrJoin(x.shape, ", "), "]; input '", input.name, "' is ",
                       ElementTypeName(input.type), " [", absl::StrJoin(input.shape, ", "), "]"));
    }
  }
  // What Run reads for the input: floats, or the integers as the model
  // declares them.
  std::vector<int32_t> ints32(x.ints.begin(), x.ints.end());
  const void* x_data = !integers ? static_cast<const void*>(x.data.data())
                       : input.type == ElementType::kInt64
                           ? static_cast<const void*>(x.ints.data())
                           : static_cast<const void*>(ints32.data());
  std::vector<FloatTensor> outputs;
  std::vector<float*> output_ptrs;
  for (const PlanTensor& t : model->outputs()) {
    int64_t n = 1;
    for (int64_t d : t.shape) n *= d;
    outputs.push_back({t.shape, std::vector<float>(n)});
  }
  for (FloatTensor& t : outputs) output_ptrs.push_back(t.data.data());
  std::vector<double> ms;
  const int warmup = std::max(1, options.warmup);
  for (int i = 0; i < warmup + std::max(1, options.repeat); ++i) {
    const auto start = std::chrono::steady_clock::now();
    TF_RETURN_IF_ERROR(model->Run({x_data}, output_ptrs));
    const double elapsed =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (i >= warmup) ms.push_back(elapsed);  // the first runs warm caches and pages
  }
  const FloatTensor& y = outputs[0];
  if (!options.output.empty()) {
    // One file per output, in order, for as many as --output names.
    const std::vector<std::string> paths = absl::StrSplit(options.output, ',');
    for (size_t i = 0; i < paths.size() && i < outputs.size(); ++i) {
      TF_RETURN_IF_ERROR(WriteNpy(paths[i], outputs[i]));
      out << "wrote " << paths[i] << " [" << absl::StrJoin(outputs[i].shape, ", ") << "]\n";
    }
  } else if (y.shape.size() == 2 && y.shape[0] == 1) {
    std::vector<int> order(y.data.size());
    std::iota(order.begin(), order.end(), 0);
    const size_t k = std::min<size_t>(5, order.size());
    std::partial_sort(order.begin(), order.begin() + k, order.end(),
                      [&](int a, int b) { return y.data[a] > y.data[b]; });
    out << "top-" << k << ":";
    for (size_t i = 0; i < k; ++i) out << absl::StrFormat(" %d (%.4f)", order[i], y.data[order[i]]);
    out << "\n";
  } else {
    out << "output [" << absl::StrJoin(y.shape, ", ") << "]:";
    for (size_t i = 0; i < std::min<size_t>(8, y.data.size()); ++i) out << " " << y.data[i];
    out << "\n";
  }
  std::vector<double> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  const double median = sorted[sorted.size() / 2];
  const double mean = std::accumulate(ms.begin(), ms.end(), 0.0) / ms.size();
  double var = 0;
  for (double v : ms) var += (v - mean) * (v - mean);
  const double std_dev = std::sqrt(var / ms.size());
  out << absl::StrFormat(
      "latency: median %.3f ms (min %.3f, max %.3f; mean %.3f, std dev %.3f over %d runs, %d "
      "threads)\n",
      median, sorted.front(), sorted.back(), mean, std_dev, static_cast<int>(ms.size()),
      model->num_threads());
  // AutoTVM's line, so the figures compare with its tutorials' as printed.
  out << absl::StrFormat("Mean inference time (std dev): %.3f ms (%.3f ms)\n", mean, std_dev);
  if (options.profile) {
    const int runs = std::max(1, options.repeat);
    // Each step's median over the runs, as the latency above is a median: on
    // a shared machine a run now and then stalls for milliseconds (another
    // tenant, a worker descheduled at a barrier), and a mean would charge
    // that to whichever step was waiting, small steps most of all. The mean
    // total is printed beside it.
    std::vector<std::vector<double>> step_runs(model->plan().steps.size());
    std::vector<std::vector<double>> epilogue_runs(model->plan().steps.size());
    double mean_total_ms = 0;
    for (int i = 0; i < runs; ++i) {
      model->SetProfiling(true);  // restarts its sums: each run read alone
      TF_RETURN_IF_ERROR(model->Run({x_data}, output_ptrs));
      for (size_t s = 0; s < step_runs.size(); ++s) {
        step_runs[s].push_back(model->step_seconds()[s]);
        epilogue_runs[s].push_back(model->epilogue_seconds()[s]);
        mean_total_ms += model->step_seconds()[s] * 1e3 / runs;
      }
    }
    model->SetProfiling(false);
    // The kernels' own times beside the whole model's, in alternating rounds
    // so that both see the machine in the same state: the model's price
    // beyond its kernels is the ratio of the medians.
    constexpr int kRounds = 5;
    const int per_round = std::max(2, runs / kRounds);
    std::vector<double> model_ms, alone_ms, cold_ms;
    std::vector<std::vector<double>> alone_by_step(step_runs.size());
    for (int round = 0; round < kRounds; ++round) {
      for (int i = 0; i < per_round; ++i) {
        const auto start = std::chrono::steady_clock::now();
        TF_RETURN_IF_ERROR(model->Run({x_data}, output_ptrs));
        model_ms.push_back(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                .count());
      }
      TF_ASSIGN_OR_RETURN(std::vector<double> alone, model->KernelSecondsAlone(per_round));
      alone_ms.push_back(std::accumulate(alone.begin(), alone.end(), 0.0) * 1e3);
      TF_ASSIGN_OR_RETURN(std::vector<double> cold,
                          model->KernelSecondsAlone(per_round, /*cold_weights=*/true));
      cold_ms.push_back(std::accumulate(cold.begin(), cold.end(), 0.0) * 1e3);
      for (size_t i = 0; i < alone.size() && i < alone_by_step.size(); ++i) {
        alone_by_step[i].push_back(alone[i]);
      }
    }
    // Every time below is one run's (a median), so FormatStepProfile's runs is 1.
    out << "profile (per step, median of " << runs << " runs):\n"
        << FormatStepProfile(model->plan(), MedianEach(step_runs), /*runs=*/1,
                             MedianEach(epilogue_runs), MedianEach(alone_by_step))
        << absl::StrFormat("%-22s %8.3f ms (the steps' means: stalls included)\n", "mean total",
                           mean_total_ms);
    // The model's median against a sum of its kernels' medians, and how
    // that sum was timed.
    const double model_median = Median(model_ms);
    auto against = [&](const char* name, double kernels_ms, const std::string& how) {
      out << absl::StrFormat(
          "%-22s %8.3f ms (%s; median of %d rounds); the model in the same rounds %.3f ms: %.2fx "
          "its kernels\n",
          name, kernels_ms, how, kRounds, model_median,
          kernels_ms > 0 ? model_median / kernels_ms : 0.0);
    };
    against("kernels alone", Median(alone_ms),
            absl::StrFormat("each kernel step called %d times back to back on its buffers, as "
                            "the time evaluator does",
                            per_round));
    against("kernels, cold weights", Median(cold_ms),
            absl::StrFormat("each kernel step called %d times, each after the weights it reads "
                            "are flushed from the caches, as the model meets them once they "
                            "outgrow the caches",
                            per_round));
  }
  return ModelRun{.median_ms = median, .mean_ms = mean, .input = std::move(x)};
}

}  // namespace tunefleet
