// The tuning loop (AutoTVM's Tuner.tune()) and the interface every search
// strategy implements. A tuner proposes batches of configs from a
// ConfigSpace, a measurer times them, and the tuner keeps the best so far:
//
//   GridTuner tuner(space);
//   TuneOptions options;
//   options.n_trial = 200;
//   options.flops = workload.flops();
//   TuneCallback log = [&](const std::vector<TrialResult>& batch) { ... };
//   TF_RETURN_IF_ERROR(tuner.Tune(measurer, options, {log}));
//   const std::optional<Config>& best = tuner.best_config();
//
// Search strategies derive from Tuner and implement HasNext / ProposeBatch
// (and Update, if they learn from results). One strategy per file: grid_tuner.h,
// random_tuner.h; MakeTuner (tuner_factory.h) builds one by name.
//
// Threading: a Tuner is used from one thread at a time.
#ifndef TUNEFLEET_TUNER_CORE_TUNERS_TUNER_H_
#define TUNEFLEET_TUNER_CORE_TUNERS_TUNER_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "tuner_core/measure/measure.h"
#include "tuner_core/records/best_so_far.h"
#include "tuner_core/records/record.h"
#include "tuner_core/space/config_space.h"

namespace tunefleet {

struct TrialResult {
  Config config;
  MeasureResult result;
};

// Builds and times a batch of configs (locally, or through the fleet).
class MeasurerInterface {
 public:
  virtual ~MeasurerInterface() = default;
  // Returns exactly one result per config, in the same order. A config that
  // fails to build or run yields a result with its error_no set, never a
  // missing entry.
  virtual std::vector<MeasureResult> Measure(const std::vector<Config>& configs) = 0;
};

struct TuneOptions {
  int64_t n_trial = 100;  // trials to run in this Tune() call (at most)
  // Stop once this many trials have passed since the best one, i.e. when
  // trials_done() - best_trial() >= early_stopping (AutoTVM's rule).
  // Negative = never stop early.
  int64_t early_stopping = -1;
  int batch_size = 8;                     // configs per Measure() call
  std::string task_label = "[Task 1/1]";  // prefix of the progress line
  // FLOPs of one run of the workload, for GFLOPS. With 0 the best config is
  // still the one with the lowest mean cost, but GFLOPS show as 0.
  double flops = 0;
  bool show_progress = true;
  std::ostream* progress_stream = nullptr;  // default std::cerr
};

// Called after every measured batch, with that batch's trials (e.g. to
// append records, or to report progress elsewhere).
using TuneCallback = std::function<void(const std::vector<TrialResult>& batch)>;

class Tuner {
 public:
  explicit Tuner(const ConfigSpace& space);
  virtual ~Tuner();

  Tuner(const Tuner&) = delete;
  Tuner& operator=(const Tuner&) = delete;

  // Runs trials until options.n_trial trials of this call are done, the
  // strategy has nothing left to propose (or NextBatch found nothing the
  // config check accepts), or early stopping triggers. May be
  // called again to continue: the best-so-far state, trials_done() and the
  // visited set carry over. InvalidArgument for bad options; Internal if the
  // measurer breaks its contract (wrong number of results).
  [[nodiscard]] absl::Status Tune(MeasurerInterface& measurer, const TuneOptions& options,
                                  const std::vector<TuneCallback>& callbacks = {});

  // Whether the strategy can propose another config.
  virtual bool HasNext() const = 0;
  // Up to `batch_size` new configs, each never proposed or marked visited
  // before and each passing the config check (SetConfigCheck). Fewer (or
  // none) only when the strategy runs out, or when kMaxRefusedPerBatch
  // proposals in a row were refused.
  std::vector<Config> NextBatch(int batch_size);
  // Sees every measured batch (never a config the check refused);
  // model-based strategies learn here.
  virtual void Update(const std::vector<TrialResult>& results) {}
  // Transfer between the tasks of one job (JobRunner): what another task
  // of this template and target measured so far, as records, for a
  // strategy that learns from other shapes (XgbTuner's history). The
  // default ignores them.
  virtual void LearnFromOtherTask(const std::vector<Record>& records) {}

  // What the target cannot build, known before building: a register tile
  // its registers cannot hold or a vector wider than it generates
  // (tuner_core/templates/register_fit.h), which the builder would refuse as
  // INSTANTIATION_ERROR. Whoever knows the target sets it (local mode does:
  // local/local_job.cc, through JobRunner);
  // NextBatch then replaces each proposal the check refuses with another.
  // A refused config is marked visited but never measured, logged, counted
  // as a trial or handed to Update: a model learns only from measurements,
  // and the check costs microseconds per proposal. Not for a strategy that
  // must measure exactly the configs it was given (GivenTuner).
  using ConfigCheck = std::function<absl::Status(const Config&)>;
  void SetConfigCheck(ConfigCheck check) { config_check_ = std::move(check); }
  // Proposals the config check refused so far.
  int64_t refused_before_measuring() const { return refused_before_measuring_; }
  // How many refusals in a row one NextBatch call accepts before it
  // returns what it has (a space the target can build almost none of).
  static constexpr int64_t kMaxRefusedPerBatch = 100'000;

  // FLOP/s of the best config so far (AutoTVM's Tuner.best_flops; divide by
  // 1e9 for GFLOPS); 0 before any success or when options.flops is 0.
  double best_flops() const { return best_flops_; }
  // The best config so far: highest FLOP/s, i.e. lowest mean cost, among
  // NO_ERROR trials. Empty before any success.
  const std::optional<Config>& best_config() const { return best_config_; }
  // 0-based number of the trial that found best_config() (0 before any).
  int64_t best_trial() const { return best_.has_best() ? best_.position() : 0; }
  // Trials measured by all Tune() calls so far.
  int64_t trials_done() const { return best_.results_seen(); }

  // Configs NextBatch returns first, in this order, each unless it was
  // proposed or marked visited by then, and each through the config check
  // like any proposal: a task's default config (toolchain/
  // default_config.h), so its records never lose to an untuned compile.
  void SetFirstConfigs(std::vector<Config> configs);
  // Up to `max` of those first configs not yet proposed, as NextBatch would
  // return them (visited ones and those the config check refuses skipped),
  // and nothing else: how a task that waits for others (a selective
  // dependent) still measures its shipped configs at the start.
  std::vector<Config> TakeFirstConfigs(int max);

  // Never propose this config index, nor any config the space declares
  // equivalent to it (ConfigSpace::EquivalentIndices), e.g. it was measured
  // in an earlier run whose records were loaded. Indices outside the space
  // are ignored.
  void MarkVisited(int64_t index);
  // Whether this config index, or one equivalent to it, was proposed or
  // marked visited (ProposeExact marks the index alone).
  bool IsVisited(int64_t index) const { return visited_.contains(index); }

 protected:
  // The strategy's own proposals: up to `batch_size` configs never proposed
  // or marked visited before (NextBatch checks them against the target).
  virtual std::vector<Config> ProposeBatch(int batch_size) = 0;

  const ConfigSpace& space() const { return space_; }
  // The indices SetFirstConfigs was given, in order (proposed or not): the
  // configs a task has reason to think fast before it measures anything.
  const std::vector<int64_t>& first_config_indices() const { return first_indices_; }
  int64_t num_visited() const { return static_cast<int64_t>(visited_.size()); }
  int64_t num_unvisited() const { return space_.size() - num_visited(); }
  // The config at `index` (inside the space), marked visited: how every
  // strategy turns a chosen index into a proposal.
  Config Propose(int64_t index);
  // The same, marking only `index` visited, not its equivalents: for a
  // strategy that measures exactly the configs it was given.
  Config ProposeExact(int64_t index);
  // A random unvisited config index drawn with `engine`: up to 64 uniform
  // draws, then a walk from a random start to the next unvisited index, so
  // it ends however full the space is. -1 when every index is visited.
  int64_t DrawUnvisited(std::mt19937_64& engine) const;

 private:
  // Folds one measured batch into the best-so-far state and error count.
  void RecordBatch(const std::vector<TrialResult>& batch, double flops);

  const ConfigSpace space_;
  // Proposed or marked visited; every proposal goes through MarkVisited.
  absl::flat_hash_set<int64_t> visited_;

  ConfigCheck config_check_;            // empty: every proposal is measured
  std::deque<Config> first_;            // SetFirstConfigs's, not yet proposed
  std::vector<int64_t> first_indices_;  // SetFirstConfigs's, all
  int64_t refused_before_measuring_ = 0;

  BestSoFar best_;           // every measured trial is offered, in order
  double best_flops_ = 0.0;  // options.flops / best_.cost_s()
  std::optional<Config> best_config_;
  int64_t consecutive_errors_ = 0;
};

// One progress line in AutoTVM's format (no '\r' or newline):
// "[Task 1/1]  Current/Best:   12.34/  56.78 GFLOPS | Progress: (40/500) | 12.34 s"
std::string ProgressLine(const std::string& task_label, double current_gflops, double best_gflops,
                         int64_t done, int64_t total, double elapsed_s);

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_TUNERS_TUNER_H_
