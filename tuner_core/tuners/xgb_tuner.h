// XgbTuner: the model-based tuner (AutoTVM's XGBTuner). Measured configs
// train an XGBoost cost model on loop-nest features (features/); simulated
// annealing over the space then picks the unmeasured configs with the best
// predictions as the next plan.
//
//   XgbTunerOptions options;               // plan_size 64, itervar, "reg"
//   options.seed = 3;
//   TF_ASSIGN_OR_RETURN(auto tuner, XgbTuner::Create(task, options, history));
//   TF_RETURN_IF_ERROR(tuner->Tune(measurer, tune_options));
//
// Proposals: before the first fit, random configs (or, with history, the
// history shapes' models' SA picks; see below). After each fit the plan is
// SA's top plan_size unvisited configs (optionally thinned for diversity),
// proposed in order; the last eps x plan_size proposals of a plan are
// random, and so is everything proposed once a plan runs out before the
// next fit.
//
// Asynchronous use (the fleet's tuner process): NextBatch(k) may be called
// with any k whenever slots free up, and Update() with any subset of results
// in any order, including configs this tuner never proposed (resumed
// records). The model is refitted after every plan_size results *received*,
// counted across Update calls, never per NextBatch call; a fit happens inside
// the Update call that crosses the threshold.
//
// Transfer learning: `history` records of the same template and target with
// other workload args (other shapes of the same workload) train one base
// model per shape, at Create. Before the first fit the plan takes the top
// picks of each shape's model in turn (SA seeded at that shape's fastest
// configs): nothing says yet which shape is like this one. Once 16 own
// results exist, the rest of that plan follows the shapes in proportion to
// their weights (below), so it soon follows the shape that fits. From the
// first fit on, the history's margin is added to this model's with total weight
// 2^(-n / transfer_half_life), n = own results so far (AutoTVM's decay),
// split between the shapes by how well each one's model orders the results
// measured here (RankingWeights, RGPE's rule): a shape whose model ranks
// this task's configs no better than chance gets no weight.
// Records of the task's own workload are not history: feed them to Update()
// (resume), after MarkVisited so they are not proposed again. Within a job,
// the other tasks of the template add their records as they go
// (LearnFromOtherTask: transfer between a model's tasks).
//
// Prior: a model trained offline on many workloads of the template
// (tuner_core/pretuned/cost_model_prior.h) joins the history as one more
// shape, named "(prior)", whose SA chains start at the task's first configs
// (SetFirstConfigs: its pretuned and default configs): it picks what follows
// them before the first fit, then is weighed and decays like any history.
//
// Errors: Create validates options and the history. A model failure during
// Update/NextBatch (which return no Status) is logged, kept in
// model_status(), and the tuner proposes random configs until a later fit
// succeeds. Not thread-safe: one thread at a time, like every Tuner.
#ifndef TUNEFLEET_TUNER_CORE_TUNERS_XGB_TUNER_H_
#define TUNEFLEET_TUNER_CORE_TUNERS_XGB_TUNER_H_

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tuner_core/cost_model/xgb_cost_model.h"
#include "tuner_core/features/feature_extractor.h"
#include "tuner_core/records/record.h"
#include "tuner_core/templates/task.h"
#include "tuner_core/tuners/simulated_annealing.h"
#include "tuner_core/tuners/tuner.h"

namespace tunefleet {

struct XgbTunerOptions {
  std::string loss = "reg";  // "reg" | "rank" (rank:pairwise)
  FeatureKind feature = FeatureKind::kItervar;
  int plan_size = 64;  // refit every plan_size results; SA picks this many
  double eps = 0.05;   // fraction of each plan proposed at random
  // > 1: SA keeps ratio x plan_size candidates and DiversePick keeps
  // plan_size of them; 0 (or 1): off.
  double diversity_filter_ratio = 0;
  uint64_t seed = 0;                    // SA, random picks and XGBoost
  double transfer_half_life = 64;       // own results that halve the history's weight
  size_t feature_cache_limit = 200000;  // cached feature rows (cleared when passed)
  // Threads that compute the features of a selection's new candidates (the
  // rows are the same for any count). 0: the machine's cores, at most 8.
  int feature_threads = 0;
  // SA chains started, at every selection, at the fastest configs measured
  // so far (as evolutionary searches seed their population with the best
  // measured states), so SA searches near them as well as where it stopped.
  // Before the first fit with history: at the history's fastest configs
  // that exist in this space, taken in turn from each history shape. The
  // model still decides what is proposed. 0: no seeding.
  int sa_seeds = 32;
  SimulatedAnnealingOptions sa;
  // SA for the first plan from the history's or the prior's models: its
  // chains start at configs known to be good (the shapes' fastest, the
  // task's first configs), and a time-budgeted job takes only the first
  // dozens of picks of most tasks, so a quarter of `sa`'s steps suffices
  // (ResNet-18 in 1 minute: 12 such plans cost 11.3 s with `sa`).
  SimulatedAnnealingOptions history_sa = {.n_iter = 40, .parallel_size = 64, .early_stop = 20};
  // XGBoost parameters; recall_k and seed are taken from plan_size and seed.
  XgbCostModelOptions model;

  // InvalidArgument naming the first bad field.
  [[nodiscard]] absl::Status Validate() const;
};

// Where the model side of a tuning run spends its time (wall seconds).
struct ModelTimings {
  double fit_seconds = 0;       // XGBoost training, with the training rows' features
  double select_seconds = 0;    // SA + diversity filter, with candidate features and predictions
  double feature_seconds = 0;   // part of fit + select spent computing features
  double transfer_seconds = 0;  // building the history shapes' base models (once)
  int64_t fits = 0;
  int64_t selections = 0;
  int64_t predicted_rows = 0;
  int64_t featurized_configs = 0;
  int64_t sa_steps = 0;  // simulated-annealing steps over all selections

  double total_seconds() const { return fit_seconds + select_seconds + transfer_seconds; }
};

class XgbTuner : public Tuner {
 public:
  // `task` must outlive the tuner. InvalidArgument for bad options; a
  // failure to train a history shape's base model is returned as is.
  // A prior trained on other feature rows than this tuner's is not used
  // (logged).
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<XgbTuner>> Create(
      const Task& task, const XgbTunerOptions& options, const std::vector<Record>& history = {},
      std::shared_ptr<const XgbCostModel> prior = nullptr);

  bool HasNext() const override;
  void Update(const std::vector<TrialResult>& results) override;
  // Another task's records (Tuner::LearnFromOtherTask): each workload of
  // this template and target among them joins the history as a shape, or,
  // already one, has its model retrained on what it is given now. A new
  // shape weighs nothing until the history is weighed again (the next fit,
  // or before it the first plan's re-split), so the model and any plan in
  // use stay as they are; given before the first plan, it takes part in it.
  // A failure (a base model that cannot be trained) is logged, and the
  // tuner goes on without those records.
  void LearnFromOtherTask(const std::vector<Record>& records) override;

  const ModelTimings& model_timings() const { return timings_; }
  // OK, or the last model failure (the tuner fell back to random proposals).
  const absl::Status& model_status() const { return model_status_; }
  // History used for transfer: records and distinct workloads (shapes).
  int64_t history_records() const { return history_records_; }
  int history_workloads() const { return static_cast<int>(history_.size()); }
  struct HistoryShapeReport {
    std::string workload_args;  // JSON
    int64_t records = 0;
    double weight = 0;              // of its margin now (the shapes' sum is history_weight())
    double ranking_accuracy = 0.5;  // pairs of own results its model orders right, at the last fit
  };
  std::vector<HistoryShapeReport> history_shapes() const;
  // Results learned from (Update) and the weight of the history now.
  int64_t num_training_rows() const { return static_cast<int64_t>(throughputs_.size()); }
  double history_weight() const;
  int64_t plan_remaining() const { return static_cast<int64_t>(plan_.size()) - plan_pos_; }

 protected:
  std::vector<Config> ProposeBatch(int batch_size) override;

 private:
  XgbTuner(const Task& task, const XgbTunerOptions& options, FeatureExtractor extractor,
           std::unique_ptr<XgbCostModel> model);

  // One history shape: its base model, its fastest configs (as indices of
  // this space) and its share of the history's weight.
  struct HistoryShape {
    std::string workload_args;
    int64_t records = 0;
    std::shared_ptr<const XgbCostModel> model;
    std::vector<int64_t> best;
    double weight = 0;
    double ranking_accuracy = 0.5;
  };

  // One shape per other workload of this template and target in `history`,
  // each with its base model trained (weights unset).
  [[nodiscard]] absl::StatusOr<std::vector<HistoryShape>> BuildHistoryShapes(
      const std::vector<Record>& history);
  void AddPrior(std::shared_ptr<const XgbCostModel> prior);
  // Sets the history shapes' models as the model's bases, each with
  // total_weight x its share.
  void SetHistoryBases(double total_weight);
  // Re-splits the history's weight by how well each shape's model orders
  // the own results.
  [[nodiscard]] absl::Status WeighHistory();
  // Features of one config of the task, cached; nullptr when it cannot be
  // instantiated.
  const std::vector<float>* FeaturesOf(int64_t index);
  // Computes and caches the rows of every index not cached yet, on up to
  // feature_threads threads.
  void CacheFeatures(const std::vector<int64_t>& indices);
  [[nodiscard]] absl::Status Refit();
  [[nodiscard]] absl::Status Replan();
  // The first plan, from the history shapes' models in turn.
  [[nodiscard]] absl::Status PlanFromHistory();
  // Before the first fit, once enough own results exist: re-splits the
  // history's weight and what is left of the first plan accordingly.
  void ReweighFirstPlan();
  // plan_ = the shapes' unvisited picks, merged by weight, for what is left
  // of the first plan.
  void MergeHistoryPicks();
  // SA from `seeds` over the model as set: up to plan_size unvisited,
  // instantiable configs, best first (thinned for diversity if asked).
  [[nodiscard]] absl::StatusOr<std::vector<int64_t>> Select(const std::vector<int64_t>& seeds,
                                                            SimulatedAnnealing& sa);
  void SetPlan(std::vector<int64_t> plan);
  [[nodiscard]] absl::StatusOr<std::vector<float>> Score(const std::vector<int64_t>& indices);
  void NoteModelFailure(const absl::Status& status);

  const Task& task_;
  const XgbTunerOptions options_;
  const FeatureExtractor extractor_;
  std::unique_ptr<XgbCostModel> model_;
  const int feature_threads_;
  std::vector<HistoryShape> history_;
  SimulatedAnnealing sa_;
  SimulatedAnnealing history_sa_;  // the first plan from history
  std::mt19937_64 engine_;

  // Training set: one row per result received.
  FeatureMatrix rows_;
  std::vector<double> throughputs_;
  int64_t results_since_fit_ = 0;

  std::vector<int64_t> plan_;
  int64_t plan_pos_ = 0;
  bool planned_from_history_ = false;
  std::vector<std::vector<int64_t>>
      history_picks_;              // first plan: each shape's SA picks, best first
  int64_t history_plan_used_ = 0;  // proposals taken from the first plan so far
  std::vector<std::pair<double, int64_t>> measured_;  // (throughput, index) of successful results

  absl::flat_hash_map<int64_t, std::vector<float>> feature_cache_;  // empty row: not instantiable
  absl::flat_hash_map<int64_t, float> score_cache_;                 // this selection's predictions

  ModelTimings timings_;
  absl::Status model_status_;
  int64_t history_records_ = 0;
};

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_TUNERS_XGB_TUNER_H_
