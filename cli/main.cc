// tunefleet: the command line. Flags -> options -> one command -> exit code.
//   tunefleet tune --workload dense --shape 1024,1024,1024 --trials 500 --log records.jsonl
//   tunefleet best --log records.jsonl
//   tunefleet measure --log records.jsonl [--top 5] [--task dense_pack.x86] [--passes 3]
//   tunefleet measure --log records.jsonl --key rk3399   # on that key's agents
//   tunefleet templates
#include <unistd.h>

#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/numbers.h"
#include "absl/time/time.h"
#include "cli/compile_commands.h"
#include "cli/credential_commands.h"
#include "cli/fleet_commands.h"
#include "cli/measure_fleet.h"
#include "cli/model_command.h"
#include "cli/optimize_command.h"
#include "clients/cpp/fleet_client.h"
#include "local/measure_command.h"
#include "local/tune_command.h"
#include "proto_convert/run_request.h"
#include "rpc/plaintext_policy.h"
#include "rpc/tls_diagnosis.h"
#include "worker_stream/worker_connection.h"

ABSL_FLAG(std::string, workload, "dense", "workload to tune");
ABSL_FLAG(std::string, model, "",
          "tasks/tune: a model whose tasks to list or tune: resnet-18, resnet-50, mobilenet-v2, "
          "vgg-16, or an ONNX file (model.onnx)");
ABSL_FLAG(bool, similarity, false,
          "tasks: print the tasks' similarity matrix and selective tuning's clusters");
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
ABSL_FLAG(std::string, tuner, "random",
          "search strategy: grid | random | ga | xgb | xgb_rank | xgb_knob | xgb_curve");
ABSL_FLAG(int32_t, plan_size, 64, "xgb*: refit the cost model every plan_size results");
ABSL_FLAG(std::string, transfer_log, "",
          "xgb*: records of other shapes of the same template and target to warm-start the model");
ABSL_FLAG(std::string, pretuned, "",
          "the configs each task measures first (a warm start): empty, the records shipped for "
          "the target's CPU family; 'none', a cold start; else a record file (tune --log's "
          "format)");
ABSL_FLAG(bool, share_runner_child, true,
          "tune --model, optimize: the model's tasks share one runner child (false: a new "
          "child, and a new reference output, at every switch of task)");
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
ABSL_FLAG(int64_t, selective_followup, 0,
          "--selective: trials each dependent task goes on tuning with its own tuner after "
          "its representative's top-k (0: it is done after them)");
ABSL_FLAG(double, queue_timeout, 0,
          "submit: fail the job when no agent of its key has been connected for this many "
          "seconds (0: wait as long as it takes)");
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
ABSL_FLAG(std::string, records, "", "compile: tuning records (JSON lines) to apply");
ABSL_FLAG(std::string, o, "", "compile: output directory (model.so)");
ABSL_FLAG(std::string, input, "", "run: input tensor (.npy float32, or raw floats); default zeros");
ABSL_FLAG(std::string, output, "",
          "run: write the model's outputs here (.npy; a comma-separated list for several)");
ABSL_FLAG(int32_t, runs, 10, "run: timed runs (after one warm-up run)");
ABSL_FLAG(absl::Duration, time_budget, absl::ZeroDuration(),
          "tune --model, submit --model, optimize: wall-clock budget of the search (10m, 90s, "
          "1h); the task scheduler spends it, then the winners are validated");
ABSL_FLAG(std::string, ort_module, "",
          "optimize: onnxruntime-node's directory (default: third_party/node/node_modules/"
          "onnxruntime-node here or above the binary)");
ABSL_FLAG(bool, epilogues_in_kernels, false,
          "compile: apply each kernel's epilogue from inside it as it finishes each row "
          "(experimental; measured slower than the pass after it)");
ABSL_FLAG(bool, profile, false,
          "run: then time every plan step over --runs more runs and print them");
ABSL_FLAG(int32_t, min_repeat_ms, 0, "grow number until a repeat lasts this long");
ABSL_FLAG(double, cooldown, 0.0, "seconds to sleep between repeats (AutoTVM default 0.1)");
ABSL_FLAG(bool, cache_flush, false, "flush the inputs from the CPU caches before each repeat");
ABSL_FLAG(double, timeout, 10.0, "seconds one measurement may take before RUN_TIMEOUT");
ABSL_FLAG(double, target_rel_ci, 0,
          "adaptive repeats: keep repeating (up to --max_repeat) until the 95 % confidence "
          "interval of the mean is within +-this fraction of it (0: off; e.g. 0.02)");
ABSL_FLAG(int32_t, max_repeat, 0, "adaptive repeats' cap (0: --repeat; else > --repeat)");
ABSL_FLAG(bool, resume, true, "skip configs already recorded in --log for this task");
ABSL_FLAG(int32_t, validate_top_k, tunefleet::kDefaultValidateTopK,
          "tune, submit: after the search, re-measure this many of the best configs, each in fresh "
          "runner "
          "children, and report the validated best (0: off, report the search's figure)");
ABSL_FLAG(int32_t, validation_passes, tunefleet::kDefaultValidationPasses,
          "tune: measurements of each validated config (the validated cost is their median)");
ABSL_FLAG(int32_t, top, tunefleet::kDefaultValidateTopK,
          "measure: records re-measured per task (the best by their reported figure)");
ABSL_FLAG(int32_t, passes, tunefleet::kDefaultValidationPasses,
          "measure: measurements of each record (the re-measured cost is their median)");
// The fleet.
ABSL_FLAG(std::string, tracker, "", "tracker host:port (default: the fleet of --fleet_dir)");
ABSL_FLAG(std::string, token_file, "", "file holding your token (default: <fleet_dir>/user.token)");
ABSL_FLAG(std::string, tls_ca, "",
          "CA of the tracker's TLS certificate (PEM); empty: plaintext (loopback, or --insecure)");
ABSL_FLAG(std::string, tls_cert, "", "client certificate (PEM), when the tracker requires one");
ABSL_FLAG(std::string, tls_key, "", "client key (PEM)");
ABSL_FLAG(bool, insecure, false,
          "allow plaintext to a tracker that is not on loopback (your token could be read on "
          "the way)");
ABSL_FLAG(std::string, fleet_dir, "",
          "directory of a `tunefleet up` fleet (default $TUNEFLEET_DIR or .tunefleet)");
ABSL_FLAG(std::string, key, "local", "device key of the agents that measure the job");
ABSL_FLAG(std::string, job, "", "job id (watch, best, export, cancel)");
ABSL_FLAG(std::string, name, "", "job name (free text)");
ABSL_FLAG(int32_t, priority, 1, "job weight when jobs share a device key");
ABSL_FLAG(int32_t, window, 0, "trials the tuner keeps in flight (0: the tracker's suggestion)");
ABSL_FLAG(bool, watch, false, "submit: then watch the job until it ends");
ABSL_FLAG(bool, all, false, "jobs: include finished jobs");
ABSL_FLAG(int32_t, agents, 1, "up: device agents to start");
ABSL_FLAG(int32_t, builders, 1, "up: builders to start");
ABSL_FLAG(int32_t, tuners, 1, "up: tuner processes to start");
ABSL_FLAG(int32_t, builder_parallelism, 0, "up: builds at once per builder (0: every core)");
ABSL_FLAG(int32_t, port, 0, "up: tracker port (0: any free port)");
ABSL_FLAG(int32_t, metrics_port, 0, "up: tracker /metrics port (0: any free port)");
ABSL_FLAG(int32_t, max_restarts, 5,
          "up: restarts of a child that dies (backoff 0.5 s doubling to 30 s) before `up` "
          "stops the fleet; a child that ran 60 s starts counting again");

namespace {

// The time evaluator settings of --number ... --timeout, for local tuning
// and for jobs submitted to the fleet alike.
tunefleet::MeasureOptions MeasureFromFlags() {
  tunefleet::MeasureOptions m;
  m.number = absl::GetFlag(FLAGS_number);
  m.repeat = absl::GetFlag(FLAGS_repeat);
  m.min_repeat_ms = absl::GetFlag(FLAGS_min_repeat_ms);
  m.cooldown_interval_s = absl::GetFlag(FLAGS_cooldown);
  m.enable_cpu_cache_flush = absl::GetFlag(FLAGS_cache_flush);
  m.timeout_s = absl::GetFlag(FLAGS_timeout);
  m.max_repeat = absl::GetFlag(FLAGS_max_repeat);
  m.target_rel_ci = absl::GetFlag(FLAGS_target_rel_ci);
  return m;
}

// measure: which records of --log it re-measures, local or on the fleet.
tunefleet::RemeasureSelection RemeasureSelectionFromFlags() {
  return {.log = absl::GetFlag(FLAGS_log),
          .top = absl::GetFlag(FLAGS_top),
          .task = absl::GetFlag(FLAGS_task),
          .passes = absl::GetFlag(FLAGS_passes)};
}

// --trials resolved: as given, else 500; for a model job under
// --time_budget with no --trials, 0 (no per-task cap: the budget alone ends
// the search).
int64_t TrialsFromFlags() {
  constexpr int64_t kDefaultTrials = 500;
  if (const int64_t given = absl::GetFlag(FLAGS_trials); given > 0) return given;
  const bool budgeted_model = !absl::GetFlag(FLAGS_model).empty() &&
                              absl::GetFlag(FLAGS_time_budget) > absl::ZeroDuration();
  return budgeted_model ? 0 : kDefaultTrials;
}

// A local search's flags (tune, optimize): tuner, trials, early stopping,
// batch, target, seed, warm start, and how this host builds, measures and
// validates.
tunefleet::TuneCommandOptions LocalSearchFromFlags() {
  tunefleet::TuneCommandOptions o;
  o.tuner = absl::GetFlag(FLAGS_tuner);
  o.pretuned = absl::GetFlag(FLAGS_pretuned);
  o.trials = TrialsFromFlags();
  o.early_stopping = absl::GetFlag(FLAGS_early_stopping);
  o.batch_size = absl::GetFlag(FLAGS_batch);
  o.target = absl::GetFlag(FLAGS_target);
  o.seed = absl::GetFlag(FLAGS_seed);
  o.local.runner.num_threads = absl::GetFlag(FLAGS_threads);
  o.local.measure = MeasureFromFlags();
  o.local.validation.top_k = absl::GetFlag(FLAGS_validate_top_k);
  o.local.validation.passes = absl::GetFlag(FLAGS_validation_passes);
  o.local.share_runner_child = absl::GetFlag(FLAGS_share_runner_child);
  o.local.reject_slower_than = absl::GetFlag(FLAGS_reject_slower_than);
  return o;
}

// --threads for running a compiled model (run, optimize): 0 means every core.
int RunThreadsFromFlag() {
  const int threads = absl::GetFlag(FLAGS_threads);
  return threads > 0 ? threads : static_cast<int>(std::thread::hardware_concurrency());
}

// --model as one job (tune with --task_policy/--selective, submit): how its
// budget is spread and whether it is tuned selectively.
[[nodiscard]] absl::StatusOr<tunefleet::ModelJobOptions> ModelJobFromFlags() {
  const std::string policy = absl::GetFlag(FLAGS_task_policy);
  tunefleet::ModelJobOptions job{
      .trials_per_task = absl::GetFlag(FLAGS_trials_per_task),
      .task_policy = policy.empty() ? "gradient" : policy,
      .selective = absl::GetFlag(FLAGS_selective),
      .selective_threshold = absl::GetFlag(FLAGS_selective_threshold),
      .selective_followup_trials = absl::GetFlag(FLAGS_selective_followup),
      .time_budget_s = absl::ToDoubleSeconds(absl::GetFlag(FLAGS_time_budget))};
  if (job.time_budget_s < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--time_budget must be positive, got ", job.time_budget_s, " s"));
  }
  const std::string share = absl::GetFlag(FLAGS_share_schedules);
  if (share == "true") {
    job.share_schedules = true;
  } else if (share == "false") {
    job.share_schedules = false;
  } else if (!share.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--share_schedules must be true or false, got \"", share, "\""));
  }
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

// --input_shape as the ONNX importer's options.
[[nodiscard]] absl::StatusOr<tunefleet::OnnxImportOptions> OnnxOptions() {
  tunefleet::OnnxImportOptions options;
  const std::string text = absl::GetFlag(FLAGS_input_shape);
  if (text.empty()) return options;
  absl::StatusOr<std::map<std::string, std::vector<int64_t>>> shapes =
      tunefleet::ParseInputShapes(text);
  if (!shapes.ok()) return shapes.status();
  options.input_shapes = *std::move(shapes);
  return options;
}

// --task as a model job's task index for best and export; -1 (the whole job) when empty.
[[nodiscard]] absl::StatusOr<int> TaskIndexFromFlag() {
  const std::string text = absl::GetFlag(FLAGS_task);
  int index = -1;
  if (!text.empty() && (!absl::SimpleAtoi(text, &index) || index < -1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--task \"", text, "\": best and export take a task's 0-based index"));
  }
  return index;
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "tunefleet <command> [flags]\n"
      "local mode (one process, no RPC):\n"
      "  optimize   tune --model (ONNX) within --time_budget (10m), compile it into -o DIR and\n"
      "             time it beside ONNX Runtime (where onnxruntime-node is installed)\n"
      "  compile    compile --model (ONNX) with the best of --records for --target into a\n"
      "             library: -o DIR (DIR/model.so; C API: compiler/runtime/tunefleet_model.h)\n"
      "  run        run a compiled model (--model DIR) on --input (.npy/raw), write --output\n"
      "             (.npy) or print the top classes; latency over --runs (--threads);\n"
      "             --profile: then the time of every plan step (node, layouts)\n"
      "  tune       build and measure configs locally and record them in --log\n"
      "             (--workload with --shape or --args, or every task of --model), then\n"
      "             re-measure its top --validate_top_k configs (default 5; 0: off)\n"
      "             --validation_passes times each and report the validated best\n"
      "  tasks      list the tuning tasks of --model\n"
      "  best       print the best record per task in --log (or of --job on the fleet), and\n"
      "             which figure it is: validated (median of passes, spread) or the search's\n"
      "  measure    re-measure the top --top records per task of --log on this host, --passes\n"
      "             times each in fresh runner children (--task: one task), against the\n"
      "             recorded figures; with --key K, on the agents of key K through the fleet\n"
      "             (--key local, the default, is this host)\n"
      "  templates  list the kernel templates\n"
      "  operators  list the ONNX operators compile claims and the attributes each supports\n"
      "the fleet:\n"
      "  up         start tracker, builders, agents and tuners on 127.0.0.1\n"
      "  submit     submit a tuning job (--key, --shape, --trials, --tuner, ...), or a whole\n"
      "             model as one job (--model resnet-18|x.onnx --trials_per_task N\n"
      "             [--task_policy gradient|round_robin|sequential] [--selective=top3])\n"
      "  watch      follow a job (--job), AutoTVM's progress line\n"
      "  jobs       list jobs (--all: finished ones too)\n"
      "  devices    list connected builders, agents and tuners\n"
      "  queue      per device key: total/free/busy/pending; per job: in flight and done\n"
      "  export     write a job's records (--job; all jobs without) to --log or stdout\n"
      "  cancel     cancel a job (--job)\n"
      "credentials:\n"
      "  token new  make a token (--role, [--device_keys], [--identity]), append its hash to\n"
      "             --tokens (the tracker's token file), write it to --token_out\n"
      "  token hash print the token file line of the token read on stdin (--role)\n"
      "  keys new   make a builder signing key (--signing_key_out) and pin its public key\n"
      "             in --pinned_keys (the tracker's --builder_keys)");
  std::vector<char*> positional = absl::ParseCommandLine(argc, argv);
  const std::string command = positional.size() > 1 ? positional[1] : "";

  absl::Status status;
  if (command == "tune") {
    tunefleet::TuneCommandOptions o = LocalSearchFromFlags();
    o.workload = absl::GetFlag(FLAGS_workload);
    o.shape = absl::GetFlag(FLAGS_shape);
    o.layout = absl::GetFlag(FLAGS_layout);
    o.template_name = absl::GetFlag(FLAGS_template_name);
    absl::StatusOr<nlohmann::json> args = ArgsFromFlag();
    if (args.ok()) o.args = *args;
    o.plan_size = absl::GetFlag(FLAGS_plan_size);
    o.transfer_log = absl::GetFlag(FLAGS_transfer_log);
    o.log = absl::GetFlag(FLAGS_log);
    o.resume = absl::GetFlag(FLAGS_resume);
    const std::string model = absl::GetFlag(FLAGS_model);
    if (!args.ok()) {
      status = args.status();
    } else if (!model.empty() && (!absl::GetFlag(FLAGS_task_policy).empty() ||
                                  !absl::GetFlag(FLAGS_selective).empty() ||
                                  absl::GetFlag(FLAGS_time_budget) != absl::ZeroDuration())) {
      const absl::StatusOr<tunefleet::ModelJobOptions> job = ModelJobFromFlags();
      absl::StatusOr<tunefleet::OnnxImportOptions> onnx = OnnxOptions();
      if (!job.ok()) {
        status = job.status();
      } else {
        status =
            onnx.ok()
                ? tunefleet::RunTuneModelJob(model, *onnx, o, *job, std::cerr, std::cout).status()
                : onnx.status();
      }
    } else if (!model.empty()) {
      absl::StatusOr<tunefleet::OnnxImportOptions> onnx = OnnxOptions();
      status = onnx.ok() ? tunefleet::RunTuneModel(model, *onnx, o, std::cerr, std::cout).status()
                         : onnx.status();
    } else {
      status = tunefleet::RunTune(o, std::cerr, std::cout).status();
    }
  } else if (command == "tasks") {
    absl::StatusOr<tunefleet::OnnxImportOptions> onnx = OnnxOptions();
    if (!onnx.ok()) {
      status = onnx.status();
    } else if (absl::GetFlag(FLAGS_similarity)) {
      status =
          tunefleet::RunSimilarity(absl::GetFlag(FLAGS_model), *onnx, absl::GetFlag(FLAGS_target),
                                   absl::GetFlag(FLAGS_selective_threshold), std::cout);
    } else {
      status = tunefleet::RunTasks(absl::GetFlag(FLAGS_model), *onnx, std::cout);
    }
  } else if (command == "best" && absl::GetFlag(FLAGS_job).empty()) {
    status = tunefleet::RunBest(absl::GetFlag(FLAGS_log), std::cout);
  } else if (command == "measure" && absl::GetFlag(FLAGS_key) == "local") {
    tunefleet::MeasureCommandOptions o;
    o.records = RemeasureSelectionFromFlags();
    o.local.runner.num_threads = absl::GetFlag(FLAGS_threads);
    o.local.measure = MeasureFromFlags();
    status = tunefleet::RunMeasure(o, std::cerr, std::cout).status();
  } else if (command == "up") {
    tunefleet::FleetLauncher::Options o = tunefleet::UpFleetOptions();
    const std::string dir = absl::GetFlag(FLAGS_fleet_dir);
    if (!dir.empty()) o.dir = dir;
    o.port = absl::GetFlag(FLAGS_port);
    o.metrics_port = absl::GetFlag(FLAGS_metrics_port);
    o.builders = absl::GetFlag(FLAGS_builders);
    o.builder_parallelism = absl::GetFlag(FLAGS_builder_parallelism);
    o.agents = absl::GetFlag(FLAGS_agents);
    o.device_key = absl::GetFlag(FLAGS_key);
    o.agent_threads = absl::GetFlag(FLAGS_threads);
    o.tuners = absl::GetFlag(FLAGS_tuners);
    o.restart.max_restarts = absl::GetFlag(FLAGS_max_restarts);
    status = tunefleet::RunUp(o, std::cout);
  } else if (command == "submit" || command == "watch" || command == "jobs" ||
             command == "devices" || command == "queue" || command == "best" ||
             command == "export" || command == "cancel" || command == "measure") {
    absl::StatusOr<tunefleet::FleetAddress> fleet =
        tunefleet::ResolveFleet(absl::GetFlag(FLAGS_tracker), absl::GetFlag(FLAGS_token_file),
                                absl::GetFlag(FLAGS_fleet_dir));
    // The PEM is read once: for the channel, and for naming TLS failures.
    absl::StatusOr<std::unique_ptr<tunefleet::TlsClientPem>> pem = tunefleet::LoadTlsClientPem(
        absl::GetFlag(FLAGS_tls_ca), absl::GetFlag(FLAGS_tls_cert), absl::GetFlag(FLAGS_tls_key));
    if (fleet.ok() && !pem.ok()) fleet = pem.status();
    if (fleet.ok()) fleet->credentials = tunefleet::TlsCredentialsFromPem(pem->get());
    if (fleet.ok() && fleet->credentials == nullptr) {
      if (absl::Status allowed = tunefleet::CheckPlaintextAllowed(
              fleet->address, absl::GetFlag(FLAGS_insecure), "--tls_ca");
          !allowed.ok()) {
        fleet = allowed;
      }
    }
    if (!fleet.ok()) {
      status = fleet.status();
    } else {
      tunefleet::FleetClient client(*fleet);
      const std::string job = absl::GetFlag(FLAGS_job);
      auto need_job = [&]() {
        return job.empty() ? absl::InvalidArgumentError("--job is required") : absl::OkStatus();
      };
      if (command == "measure") {  // --key names the agents' key (local mode: above)
        tunefleet::FleetMeasureOptions o;
        o.records = RemeasureSelectionFromFlags();
        o.key = absl::GetFlag(FLAGS_key);
        o.measure = tunefleet::ToProto(MeasureFromFlags());
        status = tunefleet::RunFleetMeasure(client, o, std::cerr, std::cout).status();
      } else if (command == "submit") {
        tunefleet::SubmitOptions o;
        o.name = absl::GetFlag(FLAGS_name);
        o.device_key = absl::GetFlag(FLAGS_key);
        o.workload = absl::GetFlag(FLAGS_workload);
        absl::StatusOr<nlohmann::json> args = ArgsFromFlag();
        if (args.ok()) o.args = *args;
        o.shape = absl::GetFlag(FLAGS_shape);
        o.layout = absl::GetFlag(FLAGS_layout);
        o.template_name = absl::GetFlag(FLAGS_template_name);
        o.target = absl::GetFlag(FLAGS_target);
        o.tuner = absl::GetFlag(FLAGS_tuner);
        o.pretuned = absl::GetFlag(FLAGS_pretuned);
        o.trials = TrialsFromFlags();
        o.early_stopping = absl::GetFlag(FLAGS_early_stopping);
        o.priority = absl::GetFlag(FLAGS_priority);
        o.seed = absl::GetFlag(FLAGS_seed);
        o.window = absl::GetFlag(FLAGS_window);
        o.measure = tunefleet::ToProto(MeasureFromFlags());
        o.validate_top_k = absl::GetFlag(FLAGS_validate_top_k);
        o.validation_passes = absl::GetFlag(FLAGS_validation_passes);
        o.model = absl::GetFlag(FLAGS_model);
        o.queue_timeout_s = absl::GetFlag(FLAGS_queue_timeout);
        absl::StatusOr<tunefleet::ModelJobOptions> model_job = ModelJobFromFlags();
        if (model_job.ok()) o.model_job = *model_job;
        if (!model_job.ok()) args = model_job.status();
        absl::StatusOr<tunefleet::OnnxImportOptions> onnx = OnnxOptions();
        if (onnx.ok()) o.onnx = *onnx;
        if (!onnx.ok() && args.ok()) args = onnx.status();
        absl::StatusOr<tunefleet::proto::JobStatus> submitted =
            args.ok() ? tunefleet::RunSubmit(client, o, std::cout) : args.status();
        status = submitted.status();
        if (submitted.ok() && absl::GetFlag(FLAGS_watch)) {
          status = tunefleet::RunWatch(client, submitted->job_id(), isatty(2), std::cerr);
        }
      } else if (command == "watch") {
        status = need_job();
        if (status.ok()) status = tunefleet::RunWatch(client, job, isatty(1), std::cout);
      } else if (command == "jobs") {
        status = tunefleet::RunJobs(client, absl::GetFlag(FLAGS_all), std::cout);
      } else if (command == "devices") {
        status = tunefleet::RunDevices(client, std::cout);
      } else if (command == "queue") {
        status = tunefleet::RunQueue(client, std::cout);
      } else if (command == "best") {
        absl::StatusOr<int> task = TaskIndexFromFlag();
        status = task.ok() ? tunefleet::RunFleetBest(client, job, *task, std::cout) : task.status();
      } else if (command == "export") {
        absl::StatusOr<int> task = TaskIndexFromFlag();
        status = task.ok()
                     ? tunefleet::RunExport(client, job, *task, absl::GetFlag(FLAGS_log), std::cout)
                     : task.status();
      } else if (command == "cancel") {
        status = need_job();
        if (status.ok()) status = tunefleet::RunCancel(client, job, std::cout);
      }
      // gRPC says only "unavailable" for a TLS misconfiguration: name it.
      if (absl::IsUnavailable(status)) {
        status = tunefleet::ExplainUnavailable(status, fleet->address, pem->get());
      }
    }
  } else if (command == "token" || command == "keys") {
    const std::vector<std::string> args(positional.begin() + 2, positional.end());
    status = command == "token" ? tunefleet::RunTokenCommand(args, std::cin, std::cout)
                                : tunefleet::RunKeysCommand(args, std::cout);
  } else if (command == "optimize") {
    tunefleet::OptimizeOptions o;
    o.model = absl::GetFlag(FLAGS_model);
    o.output_dir = absl::GetFlag(FLAGS_o);
    o.tune = LocalSearchFromFlags();
    o.threads = RunThreadsFromFlag();
    o.runs = absl::GetFlag(FLAGS_runs);
    o.ort_module = absl::GetFlag(FLAGS_ort_module);
    absl::StatusOr<tunefleet::ModelJobOptions> job = ModelJobFromFlags();
    absl::StatusOr<tunefleet::OnnxImportOptions> onnx = OnnxOptions();
    if (!job.ok()) {
      status = job.status();
    } else if (!onnx.ok()) {
      status = onnx.status();
    } else {
      o.job = *job;
      o.onnx = *onnx;
      status = tunefleet::RunOptimize(o, std::cerr, std::cout).status();
    }
  } else if (command == "compile") {
    tunefleet::CompileOptions o;
    o.model = absl::GetFlag(FLAGS_model);
    o.records = absl::GetFlag(FLAGS_records);
    o.target = absl::GetFlag(FLAGS_target);
    o.output_dir = absl::GetFlag(FLAGS_o);
    o.epilogues_in_kernels = absl::GetFlag(FLAGS_epilogues_in_kernels);
    absl::StatusOr<tunefleet::OnnxImportOptions> onnx = OnnxOptions();
    status =
        onnx.ok() ? (o.onnx = *onnx, tunefleet::RunCompileCommand(o, std::cout)) : onnx.status();
  } else if (command == "run") {
    tunefleet::RunModelOptions o;
    o.model = absl::GetFlag(FLAGS_model);
    o.input = absl::GetFlag(FLAGS_input);
    o.output = absl::GetFlag(FLAGS_output);
    o.threads = RunThreadsFromFlag();
    o.repeat = absl::GetFlag(FLAGS_runs);
    o.profile = absl::GetFlag(FLAGS_profile);
    status = tunefleet::RunModelCommand(o, std::cout).status();
  } else if (command == "operators") {
    tunefleet::RunOperatorsCommand(std::cout);
  } else if (command == "templates") {
    for (const tunefleet::Template* t : tunefleet::AllTemplates()) {
      std::cout << t->name() << " (" << t->workload_name() << "): " << t->description() << "\n";
    }
  } else {
    std::cerr << absl::ProgramUsageMessage() << "\n";
    return 2;
  }
  if (!status.ok()) {
    std::cerr << "tunefleet " << command << ": " << status.message() << "\n";
    return 1;
  }
  return 0;
}
