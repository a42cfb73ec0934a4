#include "tuner_core/tuners/xgb_tuner.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <thread>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "common/check.h"
#include "common/clock.h"
#include "common/logging.h"
#include "common/run_in_parallel.h"
#include "common/status_macros.h"
#include "tuner_core/cost_model/training_rows.h"
#include "tuner_core/tuners/diversity_filter.h"
#include "tuner_core/tuners/ranking_weights.h"
#include "tuner_core/tuners/search_util.h"

namespace tunefleet {
namespace {

// Configs that cannot be instantiated never win a selection.
constexpr float kUnbuildableScore = -std::numeric_limits<float>::infinity();

// Resamples behind the history shapes' weights (RankingWeights).
constexpr int kRankingSamples = 32;

// The history shape a prior (Create's `prior`) is reported as.
constexpr char kPriorShapeName[] = "(prior)";

// Own results it takes, before the first fit, to re-split the rest of the
// first plan between the history shapes (120 ordered pairs at most).
constexpr size_t kResultsToReweighFirstPlan = 16;

// Adds the time of a scope to a metric. Timings are reports only (no
// decision depends on them), so they use the system clock.
class StopWatch {
 public:
  explicit StopWatch(double& sink) : sink_(sink) {}
  ~StopWatch() { sink_ += watch_.ElapsedSeconds(); }

 private:
  double& sink_;
  Stopwatch watch_;
};

// A thread computes feature rows only for each this many (~50 us each).
constexpr size_t kRowsPerThread = 32;

}  // namespace

absl::Status XgbTunerOptions::Validate() const {
  if (plan_size < 1) return absl::InvalidArgumentError("xgb tuner plan_size must be >= 1");
  if (!(eps >= 0 && eps <= 1)) return absl::InvalidArgumentError("xgb tuner eps must be in [0, 1]");
  if (!(diversity_filter_ratio == 0 || diversity_filter_ratio >= 1)) {
    return absl::InvalidArgumentError("xgb tuner diversity_filter_ratio must be 0 (off) or >= 1");
  }
  if (!(transfer_half_life > 0))
    return absl::InvalidArgumentError("xgb tuner transfer_half_life must be > 0");
  if (feature_threads < 0)
    return absl::InvalidArgumentError("xgb tuner feature_threads must be >= 0");
  if (sa_seeds < 0) return absl::InvalidArgumentError("xgb tuner sa_seeds must be >= 0");
  TF_RETURN_IF_ERROR(sa.Validate());
  TF_RETURN_IF_ERROR(history_sa.Validate());
  XgbCostModelOptions effective = model;
  effective.loss = loss;
  return effective.Validate();
}

absl::StatusOr<std::unique_ptr<XgbTuner>> XgbTuner::Create(
    const Task& task, const XgbTunerOptions& options, const std::vector<Record>& history,
    std::shared_ptr<const XgbCostModel> prior) {
  TF_RETURN_IF_ERROR(options.Validate());
  TF_ASSIGN_OR_RETURN(FeatureExtractor extractor, FeatureExtractor::Create(options.feature, task));
  XgbCostModelOptions model_options = options.model;
  model_options.loss = options.loss;
  model_options.recall_k = options.plan_size;
  model_options.seed = options.seed;
  TF_ASSIGN_OR_RETURN(std::unique_ptr<XgbCostModel> model, XgbCostModel::Create(model_options));
  std::unique_ptr<XgbTuner> tuner(
      new XgbTuner(task, options, std::move(extractor), std::move(model)));
  if (!history.empty()) {
    TF_ASSIGN_OR_RETURN(tuner->history_, tuner->BuildHistoryShapes(history));
    if (tuner->history_.empty()) {
      TF_LOG(WARNING) << "xgb tuner: none of " << history.size()
                      << " history records is a successful run of " << task.name() << " on \""
                      << task.target() << "\" with other workload args; tuning cold";
    }
    for (HistoryShape& shape : tuner->history_) {
      shape.weight = 1.0 / static_cast<double>(tuner->history_.size());
      tuner->history_records_ += shape.records;
    }
    tuner->SetHistoryBases(1.0);
  }
  if (prior != nullptr) tuner->AddPrior(std::move(prior));
  return tuner;
}

void XgbTuner::AddPrior(std::shared_ptr<const XgbCostModel> prior) {
  if (prior->num_features() != extractor_.num_features()) {
    TF_LOG(WARNING) << "xgb tuner: the prior of " << task_.name() << " has "
                    << prior->num_features() << " features, this tuner's rows "
                    << extractor_.num_features() << "; tuning without it";
    return;
  }
  HistoryShape shape;
  shape.workload_args = kPriorShapeName;
  shape.model = std::move(prior);  // best stays empty: SA starts at the first configs
  history_.push_back(std::move(shape));
  for (HistoryShape& h : history_) h.weight = 1.0 / static_cast<double>(history_.size());
  SetHistoryBases(1.0);
}

XgbTuner::XgbTuner(const Task& task, const XgbTunerOptions& options, FeatureExtractor extractor,
                   std::unique_ptr<XgbCostModel> model)
    : Tuner(task.space()),
      task_(task),
      options_(options),
      extractor_(std::move(extractor)),
      model_(std::move(model)),
      feature_threads_(
          options.feature_threads > 0
              ? options.feature_threads
              : static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 8u))),
      sa_(task.space().KnobDims(), options.sa),
      history_sa_(task.space().KnobDims(), options.history_sa),
      engine_(options.seed) {
  rows_.num_features = extractor_.num_features();
}

absl::StatusOr<std::vector<XgbTuner::HistoryShape>> XgbTuner::BuildHistoryShapes(
    const std::vector<Record>& history) {
  StopWatch watch(timings_.transfer_seconds);
  // One shape per other workload of this template and target.
  const std::vector<WorkloadRecords> shapes = GroupByWorkload(history, [&](const Record& r) {
    return r.task_name == task_.name() && r.target == task_.target() &&
           r.workload_name == task_.workload().name() && r.workload_args != task_.workload().args();
  });
  std::vector<HistoryShape> built;
  for (const WorkloadRecords& records : shapes) {
    const std::string key = records.workload_args.dump();
    absl::StatusOr<TrainingRows> rows =
        FeaturizeRecords(records, options_.feature, feature_threads_);
    if (!rows.ok()) {
      TF_LOG(WARNING) << "xgb tuner: history of " << key << " skipped: " << rows.status().message();
      continue;
    }
    if (rows->rows.num_features != extractor_.num_features()) {
      TF_LOG(WARNING) << "xgb tuner: history of " << key << " skipped: its features do not match";
      continue;
    }
    std::vector<std::pair<double, size_t>> ranked;  // (throughput, row) of successful records
    for (size_t i = 0; i < rows->throughputs.size(); ++i) {
      if (rows->throughputs[i] > 0) ranked.emplace_back(rows->throughputs[i], i);
    }
    if (ranked.empty()) continue;  // nothing ran: nothing to learn what is fast
    std::stable_sort(ranked.begin(), ranked.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    HistoryShape shape;
    shape.workload_args = key;
    shape.records = static_cast<int64_t>(rows->throughputs.size());
    // The fastest whose knob values exist in this task's space; at most
    // sa_seeds of them are ever used.
    for (const auto& [throughput, i] : ranked) {
      if (static_cast<int>(shape.best.size()) >= options_.sa_seeds) break;
      // The record's "index" is its own space's (another shape's knob sizes,
      // e.g. kc capped at its K): this space recomputes it from the entity.
      nlohmann::json config = records.records[rows->used[i]]->config;
      if (config.is_object()) config.erase("index");
      if (absl::StatusOr<Config> here = task_.space().FromJson(config); here.ok()) {
        shape.best.push_back(here->index());
      }
    }
    TF_ASSIGN_OR_RETURN(std::unique_ptr<XgbCostModel> model,
                        XgbCostModel::Create(model_->options()));
    TF_RETURN_IF_ERROR(model->Fit(rows->rows, rows->throughputs));
    shape.model = std::move(model);
    built.push_back(std::move(shape));
  }
  return built;
}

void XgbTuner::LearnFromOtherTask(const std::vector<Record>& records) {
  absl::StatusOr<std::vector<HistoryShape>> built = BuildHistoryShapes(records);
  if (!built.ok()) {  // the tuner goes on as it was, without them
    TF_LOG(WARNING) << "xgb tuner: " << task_.name() << " could not learn from " << records.size()
                    << " records of another task: " << built.status();
    return;
  }
  // Before the first plan the new shapes are part of it, equal to the rest.
  const bool before_first_plan = !planned_from_history_ && !model_->trained();
  for (HistoryShape& shape : *built) {
    history_records_ += shape.records;
    auto same = std::find_if(history_.begin(), history_.end(), [&](const HistoryShape& h) {
      return h.workload_args == shape.workload_args;
    });
    if (same == history_.end()) {
      history_.push_back(std::move(shape));
      continue;
    }
    // The same workload again, with more records: a new model in its
    // place (its first-plan picks, if any, stay), the weight it had.
    history_records_ -= same->records;
    shape.weight = same->weight;
    shape.ranking_accuracy = same->ranking_accuracy;
    *same = std::move(shape);
  }
  if (before_first_plan) {
    for (HistoryShape& h : history_) h.weight = 1.0 / static_cast<double>(history_.size());
    SetHistoryBases(1.0);
  }
}

void XgbTuner::SetHistoryBases(double total_weight) {
  std::vector<XgbCostModel::WeightedModel> bases;
  for (const HistoryShape& shape : history_)
    bases.push_back({shape.model, total_weight * shape.weight});
  model_->SetBaseModels(std::move(bases));
}

absl::Status XgbTuner::WeighHistory() {
  if (history_.empty()) return absl::OkStatus();
  std::vector<std::vector<float>> predictions;
  for (const HistoryShape& shape : history_) {
    TF_ASSIGN_OR_RETURN(std::vector<float> predicted, shape.model->Predict(rows_));
    predictions.push_back(std::move(predicted));
  }
  const RankingWeightsResult weights = RankingWeights(predictions, throughputs_, kRankingSamples,
                                                      options_.seed + throughputs_.size());
  for (size_t i = 0; i < history_.size(); ++i) {
    history_[i].weight = weights.weights[i];
    history_[i].ranking_accuracy = weights.accuracy[i];
  }
  return absl::OkStatus();
}

std::vector<XgbTuner::HistoryShapeReport> XgbTuner::history_shapes() const {
  std::vector<HistoryShapeReport> report;
  for (const HistoryShape& shape : history_) {
    report.push_back({shape.workload_args, shape.records, shape.weight * history_weight(),
                      shape.ranking_accuracy});
  }
  return report;
}

double XgbTuner::history_weight() const {
  if (history_.empty()) return 0;
  return std::exp2(-static_cast<double>(throughputs_.size()) / options_.transfer_half_life);
}

const std::vector<float>* XgbTuner::FeaturesOf(int64_t index) {
  CacheFeatures({index});
  const std::vector<float>& row = feature_cache_.at(index);
  return row.empty() ? nullptr : &row;
}

void XgbTuner::CacheFeatures(const std::vector<int64_t>& indices) {
  std::vector<int64_t> missing;
  for (int64_t index : indices) {
    if (!feature_cache_.contains(index)) missing.push_back(index);
  }
  std::sort(missing.begin(), missing.end());
  missing.erase(std::unique(missing.begin(), missing.end()), missing.end());
  if (missing.empty()) return;
  if (feature_cache_.size() + missing.size() > options_.feature_cache_limit) feature_cache_.clear();
  StopWatch watch(timings_.feature_seconds);
  std::vector<std::vector<float>> rows(missing.size());  // empty: not instantiable
  auto extract = [&](size_t i) {
    absl::StatusOr<std::vector<float>> row = extractor_.Extract(missing[i]);
    if (row.ok()) rows[i] = *std::move(row);
  };
  RunInParallel(missing.size(), feature_threads_, extract, kRowsPerThread);
  timings_.featurized_configs += static_cast<int64_t>(missing.size());
  for (size_t i = 0; i < missing.size(); ++i)
    feature_cache_.emplace(missing[i], std::move(rows[i]));
}

void XgbTuner::Update(const std::vector<TrialResult>& results) {
  {
    StopWatch watch(timings_.fit_seconds);
    for (const TrialResult& trial : results) {
      ++results_since_fit_;
      const std::vector<float>* row = FeaturesOf(trial.config.index());
      if (row == nullptr) continue;  // cannot be instantiated: nothing to learn from its loop nest
      rows_.AddRow(*row);
      throughputs_.push_back(trial.result.Throughput());
      if (throughputs_.back() > 0)
        measured_.emplace_back(throughputs_.back(), trial.config.index());
    }
  }
  if (results_since_fit_ < options_.plan_size) {
    if (!history_picks_.empty() && !model_->trained()) ReweighFirstPlan();
    return;
  }
  history_picks_.clear();  // the first plan is over: from now on the fitted model plans
  // One fit however many multiples of plan_size this call brought; the
  // remainder counts towards the next one.
  results_since_fit_ %= options_.plan_size;
  absl::Status status = Refit();
  if (status.ok()) status = Replan();
  if (!status.ok()) NoteModelFailure(status);
}

absl::Status XgbTuner::Refit() {
  if (throughputs_.empty()) return absl::OkStatus();
  StopWatch watch(timings_.fit_seconds);
  TF_RETURN_IF_ERROR(WeighHistory());
  SetHistoryBases(history_weight());
  TF_RETURN_IF_ERROR(model_->Fit(rows_, throughputs_));
  ++timings_.fits;
  model_status_ = absl::OkStatus();
  return absl::OkStatus();
}

absl::StatusOr<std::vector<float>> XgbTuner::Score(const std::vector<int64_t>& indices) {
  {
    std::vector<int64_t> unscored;
    for (int64_t index : indices) {
      if (!score_cache_.contains(index)) unscored.push_back(index);
    }
    CacheFeatures(unscored);
  }
  FeatureMatrix missing_rows;
  missing_rows.num_features = extractor_.num_features();
  std::vector<int64_t> missing;
  for (int64_t index : indices) {
    if (score_cache_.contains(index)) continue;
    const std::vector<float>* row = FeaturesOf(index);
    if (row == nullptr) {
      score_cache_[index] = kUnbuildableScore;
      continue;
    }
    missing_rows.AddRow(*row);
    missing.push_back(index);
    score_cache_[index] = kUnbuildableScore;  // placeholder; also dedups within the batch
  }
  if (!missing.empty()) {
    TF_ASSIGN_OR_RETURN(std::vector<float> predicted, model_->Predict(missing_rows));
    timings_.predicted_rows += static_cast<int64_t>(predicted.size());
    for (size_t i = 0; i < missing.size(); ++i) score_cache_[missing[i]] = predicted[i];
  }
  std::vector<float> scores;
  scores.reserve(indices.size());
  for (int64_t index : indices) scores.push_back(score_cache_[index]);
  return scores;
}

absl::StatusOr<std::vector<int64_t>> XgbTuner::Select(const std::vector<int64_t>& seeds,
                                                      SimulatedAnnealing& sa) {
  score_cache_.clear();
  const bool diverse = options_.diversity_filter_ratio > 1;
  const int wanted =
      diverse ? static_cast<int>(std::ceil(options_.plan_size * options_.diversity_filter_ratio))
              : options_.plan_size;
  sa.SeedPoints(seeds);
  TF_ASSIGN_OR_RETURN(
      std::vector<int64_t> candidates,
      sa.FindMaximums([this](const std::vector<int64_t>& indices) { return Score(indices); },
                      wanted, [this](int64_t index) { return IsVisited(index); }, engine_));
  timings_.sa_steps += sa.last_steps();
  {
    // Copies of one kernel (ConfigSpace::EquivalentIndices): keep one.
    absl::flat_hash_set<int64_t> kernels;
    std::vector<int64_t> distinct;
    for (int64_t index : candidates) {
      if (kernels.insert(space().CanonicalIndex(index)).second) distinct.push_back(index);
    }
    candidates = std::move(distinct);
  }
  if (diverse) {
    std::vector<float> scores;
    std::vector<std::vector<int64_t>> points;
    const std::vector<int64_t> dims = space().KnobDims();
    for (int64_t index : candidates) {
      scores.push_back(score_cache_[index]);
      points.push_back(IndexToPoint(index, dims));
    }
    std::vector<int64_t> picked;
    for (int position : DiversePick(scores, points, options_.plan_size))
      picked.push_back(candidates[position]);
    candidates = std::move(picked);
  }
  // Configs that cannot be instantiated are not worth a trial.
  std::vector<int64_t> selected;
  for (int64_t index : candidates) {
    if (score_cache_[index] != kUnbuildableScore) selected.push_back(index);
  }
  score_cache_.clear();
  return selected;
}

void XgbTuner::SetPlan(std::vector<int64_t> plan) {
  plan_ = std::move(plan);
  plan_pos_ = 0;
  ++timings_.selections;
}

absl::Status XgbTuner::Replan() {
  if (!model_->trained()) return absl::OkStatus();
  StopWatch watch(timings_.select_seconds);
  // Seed SA at the fastest configs measured so far.
  std::vector<std::pair<double, int64_t>> best = measured_;
  const size_t n = std::min<size_t>(best.size(), static_cast<size_t>(options_.sa_seeds));
  std::partial_sort(best.begin(), best.begin() + n, best.end(), [](const auto& a, const auto& b) {
    return a.first > b.first || (a.first == b.first && a.second < b.second);  // ties: lower index
  });
  std::vector<int64_t> seeds;
  for (size_t i = 0; i < n; ++i) seeds.push_back(best[i].second);
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> plan, Select(seeds, sa_));
  SetPlan(std::move(plan));
  return absl::OkStatus();
}

absl::Status XgbTuner::PlanFromHistory() {
  StopWatch watch(timings_.select_seconds);
  // Nothing says yet which history shape is like this one: each shape's
  // model picks its own top configs (SA seeded at that shape's fastest),
  // and the plan takes them in turn, in proportion to the shapes' weights
  // (equal until own results say otherwise).
  history_picks_.clear();
  for (const HistoryShape& shape : history_) {
    model_->SetBaseModel(shape.model, 1.0);
    absl::StatusOr<std::vector<int64_t>> selected =
        Select(shape.best.empty() ? first_config_indices() : shape.best, history_sa_);
    SetHistoryBases(1.0);
    if (!selected.ok()) {
      history_picks_.clear();
      return selected.status();
    }
    history_picks_.push_back(*std::move(selected));
  }
  if (throughputs_.size() >= kResultsToReweighFirstPlan)
    TF_RETURN_IF_ERROR(WeighHistory());  // resumed results
  history_plan_used_ = 0;
  plan_pos_ = 0;
  MergeHistoryPicks();
  ++timings_.selections;
  return absl::OkStatus();
}

void XgbTuner::ReweighFirstPlan() {
  if (throughputs_.size() < kResultsToReweighFirstPlan) return;
  StopWatch watch(timings_.select_seconds);
  if (absl::Status status = WeighHistory(); !status.ok()) {
    history_picks_.clear();
    NoteModelFailure(status);
    return;
  }
  MergeHistoryPicks();
}

void XgbTuner::MergeHistoryPicks() {
  history_plan_used_ += plan_pos_;  // proposals already taken from the plan being replaced
  const size_t room =
      static_cast<size_t>(std::max<int64_t>(0, options_.plan_size - history_plan_used_));
  // Smooth weighted round robin over the shapes with weight > 0: each turn
  // every shape with picks left earns its weight, the richest proposes its
  // next unvisited pick and pays the turn's total.
  std::vector<size_t> next(history_picks_.size(), 0);
  std::vector<double> credit(history_picks_.size(), 0.0);
  absl::flat_hash_set<int64_t> planned;
  auto has_pick = [&](size_t shape) {
    const std::vector<int64_t>& picks = history_picks_[shape];
    while (next[shape] < picks.size() &&
           (IsVisited(picks[next[shape]]) ||
            planned.contains(space().CanonicalIndex(picks[next[shape]])))) {
      ++next[shape];
    }
    return next[shape] < picks.size();
  };
  std::vector<int64_t> plan;
  while (plan.size() < room) {
    double total = 0;
    int chosen = -1;
    for (size_t shape = 0; shape < history_.size(); ++shape) {
      // A shape added after the first plan was made has no picks in it.
      if (history_[shape].weight <= 0 || shape >= history_picks_.size() || !has_pick(shape)) {
        continue;
      }
      credit[shape] += history_[shape].weight;
      total += history_[shape].weight;
      if (chosen < 0 || credit[shape] > credit[static_cast<size_t>(chosen)])
        chosen = static_cast<int>(shape);
    }
    if (chosen < 0) break;  // no shape worth following is left: the rest is random
    credit[static_cast<size_t>(chosen)] -= total;
    const int64_t pick =
        history_picks_[static_cast<size_t>(chosen)][next[static_cast<size_t>(chosen)]];
    planned.insert(space().CanonicalIndex(pick));
    plan.push_back(pick);
  }
  plan_ = std::move(plan);
  plan_pos_ = 0;
}

void XgbTuner::NoteModelFailure(const absl::Status& status) {
  model_status_ = status;
  plan_.clear();
  plan_pos_ = 0;
  TF_LOG(WARNING) << "xgb tuner: model step failed, proposing random configs until the next fit: "
                  << status.message();
}

bool XgbTuner::HasNext() const { return num_unvisited() > 0; }

std::vector<Config> XgbTuner::ProposeBatch(int batch_size) {
  if (!planned_from_history_ && !history_.empty() && !model_->trained()) {
    // With history, the first plan already comes from the history's models.
    planned_from_history_ = true;
    absl::Status status = PlanFromHistory();
    if (!status.ok()) NoteModelFailure(status);
  }
  const int64_t random_tail = static_cast<int64_t>(std::floor(options_.eps * options_.plan_size));
  const int64_t planned = std::max<int64_t>(0, static_cast<int64_t>(plan_.size()) - random_tail);
  std::vector<Config> batch;
  while (static_cast<int>(batch.size()) < batch_size && HasNext()) {
    int64_t index = -1;
    while (plan_pos_ < planned && index < 0) {
      const int64_t candidate = plan_[plan_pos_++];
      if (!IsVisited(candidate)) index = candidate;
    }
    if (index < 0) index = DrawUnvisited(engine_);
    TF_CHECK(index >= 0);  // HasNext(): something is unvisited
    batch.push_back(Propose(index));
  }
  return batch;
}

}  // namespace tunefleet
