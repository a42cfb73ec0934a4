#include "tuner_core/tuners/tuner_factory.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "tuner_core/tuners/given_tuner.h"
#include "tuner_core/tuners/grid_tuner.h"
#include "tuner_core/tuners/random_tuner.h"

namespace tunefleet {

std::vector<std::string> TunerNames() {
  return {"grid", "random", "ga", "xgb", "xgb_rank", "xgb_knob", "xgb_curve", "given"};
}

bool TunerUsesPrior(const std::string& name) {
  return name == "xgb" || name == "xgb_knob" || name == "xgb_curve";
}

[[nodiscard]] absl::StatusOr<std::unique_ptr<Tuner>> MakeTuner(const std::string& name,
                                                               const ConfigSpace& space,
                                                               const TunerOptions& options) {
  if (name == "grid") return std::make_unique<GridTuner>(space);
  if (name == "given") {
    TF_ASSIGN_OR_RETURN(std::unique_ptr<GivenTuner> tuner,
                        GivenTuner::Create(space, options.given));
    return std::unique_ptr<Tuner>(std::move(tuner));
  }
  if (name == "random") return std::make_unique<RandomTuner>(space, options.seed);
  if (name == "ga") {
    GaTunerOptions ga = options.ga;
    ga.seed = options.seed;
    TF_ASSIGN_OR_RETURN(std::unique_ptr<GaTuner> tuner, GaTuner::Create(space, ga));
    return std::unique_ptr<Tuner>(std::move(tuner));
  }
  if (name == "xgb" || name == "xgb_rank" || name == "xgb_knob" || name == "xgb_curve") {
    if (options.task == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tuner '", name, "' needs the task (its features come from the task's loop nests)"));
    }
    if (options.task->space().size() != space.size() ||
        options.task->space().num_knobs() != space.num_knobs()) {
      return absl::InvalidArgumentError(
          absl::StrCat("tuner '", name, "': the task's space is not the space given"));
    }
    XgbTunerOptions xgb = options.xgb;
    xgb.seed = options.seed;
    xgb.loss = name == "xgb_rank" ? "rank" : "reg";
    xgb.feature = name == "xgb_knob"    ? FeatureKind::kKnob
                  : name == "xgb_curve" ? FeatureKind::kCurve
                                        : FeatureKind::kItervar;
    std::shared_ptr<const XgbCostModel> prior =
        options.prior_for && TunerUsesPrior(name)
            ? options.prior_for(options.task->name(), xgb.feature)
            : nullptr;
    TF_ASSIGN_OR_RETURN(std::unique_ptr<XgbTuner> tuner,
                        XgbTuner::Create(*options.task, xgb, options.history, std::move(prior)));
    return std::unique_ptr<Tuner>(std::move(tuner));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown tuner '", name, "' (known: ", absl::StrJoin(TunerNames(), ", "), ")"));
}

[[nodiscard]] absl::StatusOr<std::unique_ptr<Tuner>> MakeTuner(const std::string& name,
                                                               const ConfigSpace& space,
                                                               uint64_t seed) {
  TunerOptions options;
  options.seed = seed;
  return MakeTuner(name, space, options);
}

}  // namespace tunefleet
