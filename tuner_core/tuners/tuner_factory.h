// MakeTuner: builds a search strategy by name, for command lines, job specs
// and the fleet's tuner process.
//
//   "grid"       every config in index order
//   "random"     uniform without replacement
//   "ga"         genetic search (GaTunerOptions)
//   "xgb"        XGBoost regression model on itervar features + SA (XgbTunerOptions)
//   "xgb_rank"   the same with the rank:pairwise objective
//   "xgb_knob", "xgb_curve"   regression on knob / curve features
//   "given"      exactly TunerOptions::given, in order (re-measuring known configs)
//
//   TunerOptions options;
//   options.seed = 7;
//   options.task = task.get();                 // required by xgb*
//   options.history = transfer_records;        // optional, xgb* only
//   options.prior_for = ...;                   // optional, xgb* ("reg") only
//   TF_ASSIGN_OR_RETURN(std::unique_ptr<Tuner> tuner, MakeTuner("xgb", task->space(), options));
#ifndef TUNEFLEET_TUNER_CORE_TUNERS_TUNER_FACTORY_H_
#define TUNEFLEET_TUNER_CORE_TUNERS_TUNER_FACTORY_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tuner_core/records/record.h"
#include "tuner_core/space/config_space.h"
#include "tuner_core/templates/task.h"
#include "tuner_core/tuners/ga_tuner.h"
#include "tuner_core/tuners/tuner.h"
#include "tuner_core/tuners/xgb_tuner.h"

namespace tunefleet {

// The cost-model prior of a template on a kind of feature rows, or null.
using PriorLookup = std::function<std::shared_ptr<const XgbCostModel>(
    const std::string& template_name, FeatureKind feature)>;

struct TunerOptions {
  // Feeds every random choice (and XGBoost's); overrides ga.seed and xgb.seed.
  uint64_t seed = 0;
  // The task being tuned: the xgb* tuners build each config's loop nest from
  // it for features. Must outlive the tuner; its space must be the `space`
  // passed to MakeTuner.
  const Task* task = nullptr;
  // Transfer learning for xgb*: records of other shapes of the same template
  // and target (XgbTuner::Create). Ignored by the other tuners.
  std::vector<Record> history;
  // The cost-model prior of a template on a kind of feature rows
  // (CostModelPriors::For, tuner_core/pretuned/cost_model_prior.h), or
  // null: the xgb and xgb_knob/xgb_curve tuners ("reg" loss) start from it.
  // Unset: no prior.
  PriorLookup prior_for;
  // "given": the config indices to propose.
  std::vector<int64_t> given;
  GaTunerOptions ga;
  // plan_size, eps, SA and XGBoost parameters; the name sets loss and feature.
  XgbTunerOptions xgb;
};

// The names MakeTuner accepts, in a stable order.
std::vector<std::string> TunerNames();

// Whether the tuner of this name starts from TunerOptions::prior_for: the
// xgb tuners of the "reg" loss (a prior is a regression of normalised
// throughput), not xgb_rank nor the model-free ones.
bool TunerUsesPrior(const std::string& name);

// InvalidArgument for an unknown name, bad options, or an xgb* tuner without
// options.task (or with a task of another space).
[[nodiscard]] absl::StatusOr<std::unique_ptr<Tuner>> MakeTuner(const std::string& name,
                                                               const ConfigSpace& space,
                                                               const TunerOptions& options);

// Shorthand for the tuners that need nothing but a seed ("grid", "random",
// "ga" with default options).
[[nodiscard]] absl::StatusOr<std::unique_ptr<Tuner>> MakeTuner(const std::string& name,
                                                               const ConfigSpace& space,
                                                               uint64_t seed);

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_TUNERS_TUNER_FACTORY_H_
