#include "tuner_core/pretuned/cost_model_prior.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/file_util.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"
#include "tuner_core/cost_model/training_rows.h"
#include "tuner_core/pretuned/shipped_records.h"

namespace tunefleet {
namespace {

// One template's training rows, a group per workload.
struct TemplateRows {
  FeatureMatrix rows;
  std::vector<double> throughputs;
  std::vector<unsigned> groups;
  int workloads = 0;
};

// Every record's feature row, grouped by template (in first-seen order)
// and, within one, by workload; what cannot be featurized is counted in
// `report`.
std::vector<std::pair<std::string, TemplateRows>> Featurize(const std::vector<Record>& records,
                                                            FeatureKind feature,
                                                            CostModelPriors::TrainReport& report) {
  std::vector<std::pair<std::string, TemplateRows>> templates;
  std::map<std::string, size_t> template_index;
  for (const WorkloadRecords& workload : GroupByWorkload(records)) {
    auto skip = [&](const std::string& why) {
      report.records_skipped += static_cast<int64_t>(workload.records.size());
      report.warnings.push_back(absl::StrCat(workload.template_name, " ", workload.workload_name,
                                             " ", workload.workload_args.dump(), ": skipped, ",
                                             why));
    };
    absl::StatusOr<TrainingRows> rows = FeaturizeRecords(workload, feature);
    if (!rows.ok()) {
      skip(std::string(rows.status().message()));
      continue;
    }
    auto [it, added] = template_index.try_emplace(workload.template_name, templates.size());
    if (added) {
      templates.emplace_back(workload.template_name, TemplateRows());
      templates.back().second.rows.num_features = rows->rows.num_features;
    }
    TemplateRows& t = templates[it->second].second;
    if (t.rows.num_features != rows->rows.num_features) {
      skip(absl::StrCat(rows->rows.num_features, " features where the template's others have ",
                        t.rows.num_features));
      continue;
    }
    report.records_skipped += rows->skipped;
    const unsigned used = static_cast<unsigned>(rows->throughputs.size());
    if (used == 0) continue;
    t.rows.values.insert(t.rows.values.end(), rows->rows.values.begin(), rows->rows.values.end());
    t.throughputs.insert(t.throughputs.end(), rows->throughputs.begin(), rows->throughputs.end());
    t.groups.push_back(used);
    ++t.workloads;
    report.records_used += used;
  }
  return templates;
}

}  // namespace

XgbCostModelOptions PriorModelOptions() {
  XgbCostModelOptions options;
  options.recall_k = 256;
  options.max_rounds = 2000;
  return options;
}

absl::StatusOr<CostModelPriors> CostModelPriors::Train(const std::vector<Record>& records,
                                                       FeatureKind feature,
                                                       const XgbCostModelOptions& options,
                                                       TrainReport* report) {
  TrainReport local_report;
  TrainReport& out = report != nullptr ? *report : local_report;
  CostModelPriors priors;
  for (auto& [name, t] : Featurize(records, feature, out)) {
    bool any_ran = false;
    for (double y : t.throughputs) any_ran = any_ran || y > 0;
    if (!any_ran) {
      out.warnings.push_back(absl::StrCat(name, ": no successful trial, no prior"));
      continue;
    }
    TF_ASSIGN_OR_RETURN(std::unique_ptr<XgbCostModel> model, XgbCostModel::Create(options));
    TF_RETURN_IF_ERROR(model->Fit(t.rows, t.throughputs, t.groups));
    priors.priors_.push_back({.template_name = name,
                              .feature = feature,
                              .records = static_cast<int64_t>(t.throughputs.size()),
                              .workloads = t.workloads,
                              .model = std::move(model)});
  }
  if (priors.priors_.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "no template has a successful trial to learn from among ", records.size(), " records"));
  }
  return priors;
}

[[nodiscard]] absl::StatusOr<PriorEvaluation> EvaluatePriors(const CostModelPriors& priors,
                                                             const std::vector<Record>& records,
                                                             FeatureKind feature) {
  constexpr int kTop = 10;
  constexpr int kMinTrials = 10;
  CostModelPriors::TrainReport ignored;
  PriorEvaluation evaluation;
  for (auto& [name, t] : Featurize(records, feature, ignored)) {
    std::shared_ptr<const XgbCostModel> model = priors.For(name, feature);
    if (model == nullptr) continue;
    TF_ASSIGN_OR_RETURN(std::vector<float> scores, model->Predict(t.rows));
    size_t begin = 0;
    for (unsigned size : t.groups) {
      const size_t end = begin + size;
      std::vector<double> measured, predicted;
      for (size_t i = begin; i < end; ++i) {
        if (t.throughputs[i] <= 0) continue;  // failed: no rank to compare
        measured.push_back(t.throughputs[i]);
        predicted.push_back(scores[i]);
      }
      begin = end;
      if (static_cast<int>(measured.size()) < kMinTrials) continue;
      std::vector<size_t> order(predicted.size());
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(),
                       [&](size_t a, size_t b) { return predicted[a] > predicted[b]; });
      double best_of_top = 0;
      for (int i = 0; i < kTop; ++i) best_of_top = std::max(best_of_top, measured[order[i]]);
      // 10 at random: the i-th slowest of n (from 0) is their fastest with
      // probability C(i, 9) / C(n, 10) = i! / (i - 9)! x 10 x (n - 10)! / n!.
      std::vector<double> ascending = measured;
      std::sort(ascending.begin(), ascending.end());
      const double n = static_cast<double>(ascending.size());
      double expected = 0;
      for (size_t i = kTop - 1; i < ascending.size(); ++i) {
        const double c = static_cast<double>(i);
        expected += ascending[i] *
                    std::exp(std::lgamma(c + 1) - std::lgamma(c - kTop + 2) + std::log(kTop) +
                             std::lgamma(n - kTop + 1) - std::lgamma(n + 1));
      }
      evaluation.mean_random10_ratio += expected / ascending.back();
      evaluation.mean_spearman += RankCorrelation(predicted, measured);
      evaluation.mean_top10_ratio +=
          best_of_top / *std::max_element(measured.begin(), measured.end());
      evaluation.trials += static_cast<int64_t>(measured.size());
      ++evaluation.workloads;
    }
  }
  if (evaluation.workloads == 0) {
    return absl::InvalidArgumentError(absl::StrCat("no workload of a template with a prior has ",
                                                   kMinTrials, " successful trials among ",
                                                   records.size(), " records"));
  }
  evaluation.mean_spearman /= evaluation.workloads;
  evaluation.mean_top10_ratio /= evaluation.workloads;
  evaluation.mean_random10_ratio /= evaluation.workloads;
  return evaluation;
}

absl::StatusOr<std::shared_ptr<const CostModelPriors>> CostModelPriors::Shipped(
    absl::string_view family) {
  return ParseShippedOnce<CostModelPriors>(family, ShippedPriorFiles(), "the cost-model prior");
}

std::vector<std::string> CostModelPriors::ShippedFamilies() {
  return FamiliesOf(ShippedPriorFiles());
}

absl::StatusOr<CostModelPriors> CostModelPriors::ReadFile(const std::string& path) {
  TF_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path, kMaxRecordLogBytes));
  return Parse(text, path);
}

absl::StatusOr<CostModelPriors> CostModelPriors::Parse(absl::string_view text,
                                                       absl::string_view source) {
  CostModelPriors priors;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    if (line.find_first_not_of(" \t\r") == absl::string_view::npos) continue;
    auto bad = [&](const std::string& what) {
      return absl::InvalidArgumentError(absl::StrCat(source, " line ", line_number, ": ", what));
    };
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) return bad("not a JSON object");
    for (const char* field : {"template", "feature", "model"}) {
      if (!j.contains(field)) return bad(absl::StrCat("no \"", field, "\""));
    }
    if (!j["template"].is_string() || !j["feature"].is_string() || !j["model"].is_object()) {
      return bad("\"template\" and \"feature\" must be strings and \"model\" an object");
    }
    Prior prior;
    prior.template_name = j["template"].get<std::string>();
    absl::StatusOr<FeatureKind> feature = ParseFeatureKind(j["feature"].get<std::string>());
    if (!feature.ok()) return bad(std::string(feature.status().message()));
    prior.feature = *feature;
    if (j.contains("records") && j["records"].is_number_integer())
      prior.records = j["records"].get<int64_t>();
    if (j.contains("workloads") && j["workloads"].is_number_integer())
      prior.workloads = j["workloads"].get<int>();
    if (priors.For(prior.template_name, prior.feature) != nullptr) {
      return bad(absl::StrCat("a second prior of ", prior.template_name, " on ",
                              FeatureKindName(prior.feature), " features"));
    }
    absl::StatusOr<std::unique_ptr<XgbCostModel>> model =
        XgbCostModel::LoadJson(PriorModelOptions(), j["model"].dump());
    if (!model.ok()) return bad(std::string(model.status().message()));
    if (j.contains("num_features") && (!j["num_features"].is_number_integer() ||
                                       j["num_features"].get<int>() != (*model)->num_features())) {
      return bad(absl::StrCat("\"num_features\" says ", j["num_features"].dump(),
                              ", the model has ", (*model)->num_features()));
    }
    prior.model = *std::move(model);
    priors.priors_.push_back(std::move(prior));
  }
  return priors;
}

absl::StatusOr<std::string> CostModelPriors::Serialize() const {
  std::string out;
  for (const Prior& prior : priors_) {
    TF_ASSIGN_OR_RETURN(std::string model_json, prior.model->SaveJson());
    nlohmann::json model = nlohmann::json::parse(model_json, nullptr, /*allow_exceptions=*/false);
    if (model.is_discarded()) {
      return absl::InternalError(
          absl::StrCat("the model of ", prior.template_name, " saved as text that is not JSON"));
    }
    nlohmann::json line = {{"template", prior.template_name},
                           {"feature", FeatureKindName(prior.feature)},
                           {"num_features", prior.model->num_features()},
                           {"records", prior.records},
                           {"workloads", prior.workloads},
                           {"model", std::move(model)}};
    absl::StrAppend(&out, line.dump(), "\n");
  }
  return out;
}

std::shared_ptr<const XgbCostModel> CostModelPriors::For(absl::string_view template_name,
                                                         FeatureKind feature) const {
  for (const Prior& prior : priors_) {
    if (prior.template_name == template_name && prior.feature == feature) return prior.model;
  }
  return nullptr;
}

}  // namespace tunefleet
