#include "tuner_core/tuners/ga_tuner.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "common/check.h"
#include "common/status_macros.h"
#include "tuner_core/tuners/search_util.h"

namespace tunefleet {
namespace {

// Retries for a child that lands on a visited config before a random
// unvisited config takes its place.
constexpr int kMaxRepairs = 1000;

}  // namespace

absl::Status GaTunerOptions::Validate() const {
  if (pop_size < 2) return absl::InvalidArgumentError("ga tuner pop_size must be >= 2");
  if (elite_num < 0 || elite_num > pop_size) {
    return absl::InvalidArgumentError("ga tuner elite_num must be in [0, pop_size]");
  }
  if (!(mutation_prob >= 0 && mutation_prob <= 1)) {
    return absl::InvalidArgumentError("ga tuner mutation_prob must be in [0, 1]");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<GaTuner>> GaTuner::Create(const ConfigSpace& space,
                                                         const GaTunerOptions& options) {
  TF_RETURN_IF_ERROR(options.Validate());
  return std::unique_ptr<GaTuner>(new GaTuner(space, options));
}

GaTuner::GaTuner(const ConfigSpace& space, const GaTunerOptions& options)
    : Tuner(space), options_(options), dims_(space.KnobDims()), engine_(options.seed) {}

bool GaTuner::HasNext() const { return num_unvisited() > 0; }

void GaTuner::Update(const std::vector<TrialResult>& results) {
  for (const TrialResult& trial : results)
    pool_.emplace_back(trial.config.index(), trial.result.Throughput());
}

void GaTuner::Breed() {
  std::vector<int64_t> next;
  absl::flat_hash_set<int64_t> chosen;  // canonical indices: one child per kernel
  auto is_chosen = [&](int64_t index) { return chosen.contains(space().CanonicalIndex(index)); };
  const int64_t unvisited = num_unvisited();
  if (unvisited <= options_.pop_size) {
    // Nothing left to search for: the rest of the space is the generation.
    for (int64_t index = 0; index < space().size(); ++index) {
      if (!IsVisited(index)) next.push_back(index);
    }
  } else {
    std::vector<std::pair<int64_t, double>> parents = pool_;
    parents.insert(parents.end(), elites_.begin(), elites_.end());
    // Elites: the best configs among this pool and the old elites, distinct.
    std::vector<std::pair<int64_t, double>> ranked = parents;
    std::stable_sort(ranked.begin(), ranked.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    elites_.clear();
    absl::flat_hash_set<int64_t> elite_set;
    for (const auto& p : ranked) {
      if (static_cast<int>(elites_.size()) >= options_.elite_num) break;
      if (elite_set.insert(p.first).second) elites_.push_back(p);
    }
    // Fitness-proportional parent draws (with a floor so failures can still
    // be picked when nothing has succeeded).
    double best = 0;
    for (const auto& p : parents) best = std::max(best, p.second);
    std::vector<double> cumulative;
    double total = 0;
    for (const auto& p : parents) {
      total += (best > 0 ? p.second / best : 0) + 1e-8;
      cumulative.push_back(total);
    }
    auto draw_parent = [&]() -> size_t {
      const double r = UniformUnit(engine_) * total;
      return std::min<size_t>(
          std::upper_bound(cumulative.begin(), cumulative.end(), r) - cumulative.begin(),
          parents.size() - 1);
    };
    while (static_cast<int>(next.size()) < options_.pop_size) {
      int64_t child_index = -1;
      if (parents.size() >= 1) {
        const size_t a = draw_parent();
        size_t b = draw_parent();
        for (int retry = 0; retry < 8 && b == a && parents.size() > 1; ++retry) b = draw_parent();
        const std::vector<int64_t> p1 = IndexToPoint(parents[a].first, dims_);
        const std::vector<int64_t> p2 = IndexToPoint(parents[b].first, dims_);
        std::vector<int64_t> child = p1;
        const size_t cut = UniformBelow(engine_, dims_.size());
        for (size_t k = cut; k < dims_.size(); ++k) child[k] = p2[k];
        for (size_t k = 0; k < dims_.size(); ++k) {
          if (UniformUnit(engine_) < options_.mutation_prob)
            child[k] = UniformBelow(engine_, dims_[k]);
        }
        child_index = PointToIndex(child, dims_);
        for (int repair = 0;
             repair < kMaxRepairs && (IsVisited(child_index) || is_chosen(child_index)); ++repair) {
          const size_t k = UniformBelow(engine_, dims_.size());
          child[k] = UniformBelow(engine_, dims_[k]);
          child_index = PointToIndex(child, dims_);
        }
        if (IsVisited(child_index) || is_chosen(child_index)) child_index = -1;
      }
      if (child_index < 0) {
        // No parents yet (all results still in flight), or a crowded
        // neighbourhood: a random newcomer.
        for (int attempt = 0; attempt < kMaxRepairs && child_index < 0; ++attempt) {
          const int64_t candidate = DrawUnvisited(engine_);
          if (candidate >= 0 && !is_chosen(candidate)) child_index = candidate;
        }
        if (child_index < 0) break;
      }
      chosen.insert(space().CanonicalIndex(child_index));
      next.push_back(child_index);
    }
  }
  pool_.clear();
  genes_ = std::move(next);
  next_gene_ = 0;
  ++generation_;
}

std::vector<Config> GaTuner::ProposeBatch(int batch_size) {
  std::vector<Config> batch;
  while (static_cast<int>(batch.size()) < batch_size && HasNext()) {
    if (next_gene_ >= genes_.size()) {
      if (genes_.empty() && generation_ == 0) {
        // Generation 0: random configs.
        absl::flat_hash_set<int64_t> chosen;
        while (static_cast<int64_t>(genes_.size()) <
               std::min<int64_t>(options_.pop_size, num_unvisited())) {
          const int64_t index = DrawUnvisited(engine_);
          if (chosen.insert(index).second) genes_.push_back(index);
        }
        next_gene_ = 0;
      } else {
        Breed();
      }
      if (genes_.empty()) break;
    }
    const int64_t index = genes_[next_gene_++];
    if (IsVisited(index)) continue;  // marked visited by someone else since
    absl::StatusOr<Config> config = space().Get(index);
    TF_CHECK(config.ok());
    MarkVisited(index);
    batch.push_back(*std::move(config));
  }
  return batch;
}

}  // namespace tunefleet
