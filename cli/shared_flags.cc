#include "cli/shared_flags.h"

#include <map>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "cli/model_command.h"
#include "common/status_macros.h"
#include "proto_convert/run_request.h"
#include "proto_convert/task_spec.h"
#include "toolchain/codegen/target.h"
#include "tuner_core/workloads/workload.h"

ABSL_FLAG(std::string, workload, "dense", "workload to tune");
ABSL_FLAG(std::string, model, "",
          "tasks/tune: a model whose tasks to list or tune: resnet-18, resnet-50, mobilenet-v2, "
          "vgg-16, or an ONNX file (model.onnx)");
ABSL_FLAG(double, selective_threshold, 0.01,
          "tasks --similarity: similarity at which two tasks are linked (AutoTVM's RFC: 0.01)");
ABSL_FLAG(
    std::string, input_shape, "",
    "ONNX models: shapes of inputs with dynamic dimensions, e.g. input=1,3,224,224;mask=1,128");
ABSL_FLAG(std::string, shape, "", "workload shape: M,N,K for dense, B,M,N,K for batch_matmul");
ABSL_FLAG(std::string, args, "",
          "workload arguments as a JSON object, e.g. '{\"C\":64,\"H\":56,...}' for conv2d_nchw "
          "(instead of --shape)");
ABSL_FLAG(std::string, layout, "NK", "dense: NK (B is [N,K], like a linear layer) or KN");
ABSL_FLAG(std::string, template_name, "", "template (default: the workload's best)");
ABSL_FLAG(std::string, tuner, "",
          "search strategy: grid | random | ga | xgb | xgb_rank | xgb_knob | xgb_curve (empty: "
          "xgb for a model's job, which starts from the cost-model prior; random for one "
          "kernel's)");
ABSL_FLAG(int32_t, plan_size, 64, "xgb*: refit the cost model every plan_size results");
ABSL_FLAG(std::string, pretuned, "",
          "the configs each task measures first (a warm start): empty, the records shipped for "
          "the target's CPU family; 'none', a cold start; else a record file (tune --log's "
          "format)");
ABSL_FLAG(std::string, cost_model_prior, "",
          "tune, optimize with the xgb tuner (a model's default): the cost model each task's "
          "model starts from: "
          "empty, the one shipped for the target's CPU family (none with --pretuned=none or a "
          "--pretuned file); 'none', no prior; else a file of `tunefleet train_prior`");
ABSL_FLAG(bool, share_runner_child, true,
          "tune --model, optimize: the model's tasks share one runner child (false: a new "
          "child, and a new reference output, at every switch of task)");
ABSL_FLAG(bool, build_ahead, true,
          "tune, optimize: build the next batch of candidates while the current one is measured, "
          "on the CPUs --threads leaves free (none with --threads 0 or every CPU: each batch is "
          "then built, then measured)");
ABSL_FLAG(double, reject_slower_than, 0,
          "tune --model, optimize: a candidate whose first timed repeat is slower than this "
          "many times its task's best so far is timed no further (0: off)");
ABSL_FLAG(int64_t, trials, 0,
          "number of trials (per task with --model); 0: 500, except under --time_budget with "
          "--model, where no per-task cap is set and the budget ends the search");
ABSL_FLAG(
    int64_t, trials_per_task, 0,
    "submit --model: trials per task (the job's budget is this times its tasks; 0: --trials)");
ABSL_FLAG(std::string, task_policy, "",
          "--model: how the budget is spread over the tasks: gradient (Ansor's task scheduler; "
          "submit's default), round_robin, or sequential (each task in turn); with tune, any "
          "value (or --selective) runs the model as one job like submit does");
ABSL_FLAG(std::string, selective, "",
          "--model: selective tuning; the top-k each task takes from its cluster's "
          "representative: top3, 5% (--selective=top10)");
ABSL_FLAG(std::string, share_schedules, "",
          "--model as one job: true | false: whether a task first tries the best schedule of "
          "the fastest task of its template (empty: on with the gradient policy)");
ABSL_FLAG(std::string, transfer_between_tasks, "",
          "--model as one job: true | false: whether each task's xgb tuner learns from what "
          "the tasks of its template most like it measured so far (empty: off)");
ABSL_FLAG(int64_t, selective_followup, 0,
          "--selective: trials each dependent task goes on tuning with its own tuner after "
          "its representative's top-k (0: it is done after them)");
ABSL_FLAG(std::string, task, "",
          "best, export: one task of a model job (0-based index; empty: the whole job); "
          "measure: only the records of this task (template name, e.g. dense_pack.x86)");
ABSL_FLAG(int64_t, early_stopping, -1, "stop after this many trials without improvement (<0: off)");
ABSL_FLAG(int32_t, batch, 8, "configs built in parallel, then measured one by one");
ABSL_FLAG(std::string, log, "", "records file (JSON lines, appended)");
ABSL_FLAG(std::string, target, "", "LLVM target string (default: the host, llvm -mcpu=<cpu>)");
ABSL_FLAG(uint64_t, seed, 0, "tuner seed (a run can be replayed)");
ABSL_FLAG(int32_t, threads, 0, "kernel threads (0: every core)");
ABSL_FLAG(int32_t, number, 4, "runs per repeat (AutoTVM number)");
ABSL_FLAG(int32_t, repeat, 3, "repeats (AutoTVM repeat)");
ABSL_FLAG(std::string, o, "", "compile: output directory (model.so)");
ABSL_FLAG(int32_t, runs, 10, "run: timed runs (after --warmup untimed ones)");
ABSL_FLAG(int32_t, warmup, 10,
          "run: untimed runs first (at least 1), as many as bench/'s ONNX Runtime and PyTorch "
          "harnesses make");
ABSL_FLAG(absl::Duration, time_budget, absl::ZeroDuration(),
          "tune --model, submit --model, optimize: wall-clock budget of the search (10m, 90s, "
          "1h); the task scheduler spends it, then the winners are validated");
ABSL_FLAG(int32_t, min_repeat_ms, 0, "grow number until a repeat lasts this long");
ABSL_FLAG(double, cooldown, 0.0, "seconds to sleep between repeats (AutoTVM default 0.1)");
ABSL_FLAG(std::string, cache_flush, "",
          "true | false: flush the kernel's weights (every input but the first, the activation) "
          "from the CPU caches before each repeat (empty: on for a --model job, where the "
          "compiled model finds each layer's weights cold; off for one workload)");
ABSL_FLAG(double, timeout, 10.0, "seconds one measurement may take before RUN_TIMEOUT");
ABSL_FLAG(double, target_rel_ci, 0,
          "adaptive repeats: keep repeating (up to --max_repeat) until the 95 % confidence "
          "interval of the mean is within +-this fraction of it (0: off; e.g. 0.02)");
ABSL_FLAG(int32_t, max_repeat, 0, "adaptive repeats' cap (0: --repeat; else > --repeat)");
ABSL_FLAG(int32_t, validate_top_k, tunefleet::kDefaultValidateTopK,
          "tune, submit: after the search, re-measure this many of the best configs, each in fresh "
          "runner "
          "children, and report the validated best (0: off, report the search's figure)");
ABSL_FLAG(int32_t, validation_passes, tunefleet::kDefaultValidationPasses,
          "tune: measurements of each validated config (the validated cost is their median)");
ABSL_FLAG(std::string, fleet_dir, "",
          "directory of a `tunefleet up` fleet (default $TUNEFLEET_DIR or .tunefleet)");
ABSL_FLAG(std::string, key, "local", "device key of the agents that measure the job");

namespace tunefleet {

namespace {

// A flag that is "true", "false" or "" (unset: the spec's default).
[[nodiscard]] absl::StatusOr<std::optional<bool>> OptionalBool(const std::string& flag,
                                                               const std::string& value) {
  if (value == "true") return true;
  if (value == "false") return false;
  if (value.empty()) return std::nullopt;
  return absl::InvalidArgumentError(
      absl::StrCat("--", flag, " must be true or false, got \"", value, "\""));
}

// --model's budget and policy; `default_policy` when --task_policy is empty.
[[nodiscard]] absl::StatusOr<ModelJobOptions> ModelJobFromFlags(const std::string& default_policy) {
  const std::string policy = absl::GetFlag(FLAGS_task_policy);
  ModelJobOptions job{.trials_per_task = absl::GetFlag(FLAGS_trials_per_task),
                      .task_policy = policy.empty() ? default_policy : policy,
                      .selective = absl::GetFlag(FLAGS_selective),
                      .selective_threshold = absl::GetFlag(FLAGS_selective_threshold),
                      .selective_followup_trials = absl::GetFlag(FLAGS_selective_followup),
                      .time_budget_s = absl::ToDoubleSeconds(absl::GetFlag(FLAGS_time_budget))};
  if (job.time_budget_s < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--time_budget must be positive, got ", job.time_budget_s, " s"));
  }
  TF_ASSIGN_OR_RETURN(job.share_schedules,
                      OptionalBool("share_schedules", absl::GetFlag(FLAGS_share_schedules)));
  TF_ASSIGN_OR_RETURN(
      job.transfer_between_tasks,
      OptionalBool("transfer_between_tasks", absl::GetFlag(FLAGS_transfer_between_tasks)));
  return job;
}

// --args as JSON; null when the flag is empty.
[[nodiscard]] absl::StatusOr<nlohmann::json> ArgsFromFlag() {
  const std::string text = absl::GetFlag(FLAGS_args);
  if (text.empty()) return nlohmann::json();
  nlohmann::json args = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (args.is_discarded() || !args.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat("--args is not a JSON object: ", text));
  }
  return args;
}

// The spec's pretuned_family for --pretuned: the target's family when empty.
[[nodiscard]] absl::StatusOr<std::string> PretunedFamilyFromFlag(const std::string& target,
                                                                 bool for_fleet) {
  const std::string pretuned = absl::GetFlag(FLAGS_pretuned);
  if (for_fleet && !pretuned.empty() && pretuned != "none") {
    return absl::InvalidArgumentError(absl::StrCat(
        "submit --pretuned takes '' (the records shipped for the target's family) or 'none'; "
        "a record file (\"",
        pretuned, "\") is for local tune and optimize: the fleet's tuner cannot read it"));
  }
  if (!pretuned.empty()) return std::string();
  TF_ASSIGN_OR_RETURN(TargetSpec parsed, ParseTarget(target));
  return parsed.family();
}

// Each task's target resolved here, where LLVM is (TaskSpec.vectors): the
// fleet's tuner then skips the register tiles it cannot hold.
[[nodiscard]] absl::Status AddTargetVectors(proto::JobSpec& spec) {
  auto add = [](proto::TaskSpec& task) -> absl::Status {
    TF_ASSIGN_OR_RETURN(const TargetSpec target, ParseTarget(task.target()));
    proto::TargetVectors* v = task.mutable_vectors();
    v->set_triple(target.triple);
    v->set_vector_bits(target.vector_bits);
    v->set_max_vector_bits(target.max_vector_bits);
    v->set_vector_registers(target.vector_registers);
    return absl::OkStatus();
  };
  if (spec.has_task()) TF_RETURN_IF_ERROR(add(*spec.mutable_task()));
  for (proto::JobTask& t : *spec.mutable_tasks()) TF_RETURN_IF_ERROR(add(*t.mutable_task()));
  return absl::OkStatus();
}

}  // namespace

[[nodiscard]] absl::StatusOr<proto::JobSpec> JobSpecFromFlags(const JobFlagDefaults& defaults) {
  const std::string flag_target = absl::GetFlag(FLAGS_target);
  const std::string target = flag_target.empty() ? defaults.target : flag_target;
  const std::string model = absl::GetFlag(FLAGS_model);
  const int64_t trials = TrialsFromFlags();
  proto::JobSpec spec;
  if (!model.empty()) {
    TF_ASSIGN_OR_RETURN(ModelJobOptions job, ModelJobFromFlags(defaults.task_policy));
    const int64_t per_task = absl::GetFlag(FLAGS_trials_per_task);
    job.trials_per_task = per_task > 0 ? per_task : trials;
    TF_ASSIGN_OR_RETURN(OnnxImportOptions onnx, OnnxOptionsFromFlag());
    TF_ASSIGN_OR_RETURN(spec, ModelJobSpec(model, onnx, target, job));
  } else {
    const std::string workload = absl::GetFlag(FLAGS_workload);
    TF_ASSIGN_OR_RETURN(nlohmann::json args, ArgsFromFlag());
    if (args.is_null()) {
      TF_ASSIGN_OR_RETURN(args, WorkloadArgsFromShape(workload, absl::GetFlag(FLAGS_shape),
                                                      absl::GetFlag(FLAGS_layout)));
    }
    *spec.mutable_task() = MakeTaskSpec(absl::GetFlag(FLAGS_template_name), workload, args, target);
    spec.set_n_trial(trials);
  }
  const std::string tuner = absl::GetFlag(FLAGS_tuner);
  spec.set_tuner(!tuner.empty() ? tuner : model.empty() ? "random" : "xgb");
  spec.set_seed(absl::GetFlag(FLAGS_seed));
  spec.set_early_stopping(absl::GetFlag(FLAGS_early_stopping));
  spec.set_plan_size(absl::GetFlag(FLAGS_plan_size));
  TF_ASSIGN_OR_RETURN(const MeasureOptions measure, MeasureFromFlags(!model.empty()));
  *spec.mutable_measure() = ToProto(measure);
  spec.set_validate_top_k(absl::GetFlag(FLAGS_validate_top_k));
  spec.set_validation_passes(absl::GetFlag(FLAGS_validation_passes));
  TF_ASSIGN_OR_RETURN(*spec.mutable_pretuned_family(),
                      PretunedFamilyFromFlag(target, defaults.for_fleet));
  TF_RETURN_IF_ERROR(AddTargetVectors(spec));
  return spec;
}

LocalRunOptions LocalRunFromFlags() {
  LocalRunOptions run;
  run.log = absl::GetFlag(FLAGS_log);
  const std::string pretuned = absl::GetFlag(FLAGS_pretuned);
  if (pretuned != "none") run.pretuned_file = pretuned;
  run.prior_file = absl::GetFlag(FLAGS_cost_model_prior);
  run.host.runner.num_threads = absl::GetFlag(FLAGS_threads);
  run.host.share_runner_child = absl::GetFlag(FLAGS_share_runner_child);
  run.host.build_ahead = absl::GetFlag(FLAGS_build_ahead);
  run.host.reject_slower_than = absl::GetFlag(FLAGS_reject_slower_than);
  return run;
}

[[nodiscard]] absl::StatusOr<MeasureOptions> MeasureFromFlags(bool model_job) {
  MeasureOptions m;
  TF_ASSIGN_OR_RETURN(const std::optional<bool> flush,
                      OptionalBool("cache_flush", absl::GetFlag(FLAGS_cache_flush)));
  m.enable_cpu_cache_flush = flush.value_or(model_job);
  m.number = absl::GetFlag(FLAGS_number);
  m.repeat = absl::GetFlag(FLAGS_repeat);
  m.min_repeat_ms = absl::GetFlag(FLAGS_min_repeat_ms);
  m.cooldown_interval_s = absl::GetFlag(FLAGS_cooldown);
  m.timeout_s = absl::GetFlag(FLAGS_timeout);
  m.max_repeat = absl::GetFlag(FLAGS_max_repeat);
  m.target_rel_ci = absl::GetFlag(FLAGS_target_rel_ci);
  return m;
}

RemeasureSelection RemeasureSelectionFromFlags(int top, int passes) {
  return {.log = absl::GetFlag(FLAGS_log),
          .top = top,
          .task = absl::GetFlag(FLAGS_task),
          .passes = passes};
}

int64_t TrialsFromFlags() {
  constexpr int64_t kDefaultTrials = 500;
  if (const int64_t given = absl::GetFlag(FLAGS_trials); given > 0) return given;
  const bool budgeted_model = !absl::GetFlag(FLAGS_model).empty() &&
                              absl::GetFlag(FLAGS_time_budget) > absl::ZeroDuration();
  return budgeted_model ? 0 : kDefaultTrials;
}

int RunThreadsFromFlag() {
  const int threads = absl::GetFlag(FLAGS_threads);
  return threads > 0 ? threads : static_cast<int>(std::thread::hardware_concurrency());
}

[[nodiscard]] absl::StatusOr<OnnxImportOptions> OnnxOptionsFromFlag() {
  OnnxImportOptions options;
  const std::string text = absl::GetFlag(FLAGS_input_shape);
  if (text.empty()) return options;
  absl::StatusOr<std::map<std::string, std::vector<int64_t>>> shapes = ParseInputShapes(text);
  if (!shapes.ok()) return shapes.status();
  options.input_shapes = *std::move(shapes);
  return options;
}

[[nodiscard]] absl::StatusOr<int> TaskIndexFromFlag() {
  const std::string text = absl::GetFlag(FLAGS_task);
  int index = -1;
  if (!text.empty() && (!absl::SimpleAtoi(text, &index) || index < -1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--task \"", text, "\": best and export take a task's 0-based index"));
  }
  return index;
}

}  // namespace tunefleet
