#include "tuner_core/tuners/simulated_annealing.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "tuner_core/tuners/search_util.h"

namespace tunefleet {
namespace {

// The top-`capacity` (score, index) pairs seen, as a min-heap on score so the
// weakest is replaced first; `members` keeps indices unique.
class TopList {
 public:
  explicit TopList(int capacity) : capacity_(capacity) {}

  // True when the list changed.
  bool Offer(float score, int64_t index, int64_t order) {
    if (capacity_ == 0 || members_.contains(index)) return false;
    Entry entry{score, order, index};
    if (static_cast<int>(heap_.size()) < capacity_) {
      heap_.push_back(entry);
      std::push_heap(heap_.begin(), heap_.end(), Worse);
    } else if (Worse(entry, heap_.front())) {
      std::pop_heap(heap_.begin(), heap_.end(), Worse);
      members_.erase(heap_.back().index);
      heap_.back() = entry;
      std::push_heap(heap_.begin(), heap_.end(), Worse);
    } else {
      return false;
    }
    members_.insert(index);
    return true;
  }

  std::vector<int64_t> BestFirst() const {
    std::vector<Entry> sorted = heap_;
    std::sort(sorted.begin(), sorted.end(), Worse);
    std::vector<int64_t> out;
    for (const Entry& e : sorted) out.push_back(e.index);
    return out;
  }

 private:
  struct Entry {
    float score;
    int64_t order;  // when first seen: earlier wins ties
    int64_t index;
  };
  // a ranks before b (better); the heap keeps the worst at the front.
  static bool Worse(const Entry& a, const Entry& b) {
    if (a.score != b.score) return a.score > b.score;
    return a.order < b.order;
  }

  const int capacity_;
  std::vector<Entry> heap_;
  absl::flat_hash_set<int64_t> members_;
};

}  // namespace

absl::Status SimulatedAnnealingOptions::Validate() const {
  if (n_iter < 0) return absl::InvalidArgumentError("simulated annealing n_iter must be >= 0");
  if (parallel_size < 1)
    return absl::InvalidArgumentError("simulated annealing parallel_size must be >= 1");
  if (early_stop < 1)
    return absl::InvalidArgumentError("simulated annealing early_stop must be >= 1");
  if (!(temp_start >= temp_end) || temp_end < 0) {
    return absl::InvalidArgumentError("simulated annealing needs temp_start >= temp_end >= 0");
  }
  return absl::OkStatus();
}

SimulatedAnnealing::SimulatedAnnealing(std::vector<int64_t> dims, SimulatedAnnealingOptions options)
    : dims_(std::move(dims)), options_(options) {
  for (int64_t d : dims_) space_size_ *= d;
}

int64_t SimulatedAnnealing::RandomWalk(int64_t index, std::mt19937_64& engine) const {
  std::vector<int64_t> point = IndexToPoint(index, dims_);
  std::vector<int> movable;
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (dims_[i] > 1) movable.push_back(static_cast<int>(i));
  }
  if (movable.empty()) return index;
  const int knob = movable[UniformBelow(engine, movable.size())];
  // Another choice of that knob, uniformly.
  int64_t choice = static_cast<int64_t>(UniformBelow(engine, dims_[knob] - 1));
  if (choice >= point[knob]) ++choice;
  point[knob] = choice;
  return PointToIndex(point, dims_);
}

void SimulatedAnnealing::SeedPoints(const std::vector<int64_t>& points) {
  seeds_.clear();
  for (int64_t p : points) {
    if (p >= 0 && p < space_size_) seeds_.push_back(p);
  }
}

absl::StatusOr<std::vector<int64_t>> SimulatedAnnealing::FindMaximums(
    const ScoreFunction& score, int num, const ExcludeFunction& exclude, std::mt19937_64& engine) {
  TF_RETURN_IF_ERROR(options_.Validate());
  if (num < 0)
    return absl::InvalidArgumentError(absl::StrCat("simulated annealing num ", num, " < 0"));
  for (int64_t d : dims_) {
    if (d < 1) return absl::InvalidArgumentError("simulated annealing: a knob without choices");
  }
  if (!options_.persistent || static_cast<int>(points_.size()) != options_.parallel_size) {
    points_.clear();
    for (int i = 0; i < options_.parallel_size; ++i) {
      points_.push_back(
          static_cast<int64_t>(UniformBelow(engine, static_cast<uint64_t>(space_size_))));
    }
  }
  for (size_t i = 0; i < seeds_.size() && i < points_.size(); ++i) points_[i] = seeds_[i];
  seeds_.clear();
  TopList top(num);
  int64_t seen = 0;
  auto offer_all = [&](const std::vector<int64_t>& indices, const std::vector<float>& scores) {
    bool changed = false;
    for (size_t i = 0; i < indices.size(); ++i) {
      if (!exclude(indices[i]) && top.Offer(scores[i], indices[i], seen)) changed = true;
      ++seen;
    }
    return changed;
  };

  TF_ASSIGN_OR_RETURN(std::vector<float> scores, score(points_));
  if (scores.size() != points_.size()) {
    return absl::InternalError(absl::StrCat("score function gave ", scores.size(), " scores for ",
                                            points_.size(), " points"));
  }
  offer_all(points_, scores);

  double temperature = options_.temp_start;
  const double cooling = (options_.temp_start - options_.temp_end) / (options_.n_iter + 1);
  int step = 0, last_change = 0;
  std::vector<int64_t> next(points_.size());
  while (step < options_.n_iter && step < last_change + options_.early_stop) {
    for (size_t c = 0; c < points_.size(); ++c) next[c] = RandomWalk(points_[c], engine);
    TF_ASSIGN_OR_RETURN(std::vector<float> next_scores, score(next));
    if (next_scores.size() != next.size()) {
      return absl::InternalError(absl::StrCat("score function gave ", next_scores.size(),
                                              " scores for ", next.size(), " points"));
    }
    for (size_t c = 0; c < points_.size(); ++c) {
      const double delta = static_cast<double>(next_scores[c]) - scores[c];
      const double accept = std::exp(std::min(delta / (temperature + 1e-5), 1.0));
      if (UniformUnit(engine) < accept) {
        points_[c] = next[c];
        scores[c] = next_scores[c];
      }
    }
    if (offer_all(next, next_scores)) last_change = step;
    ++step;
    temperature -= cooling;
  }
  last_steps_ = step;
  last_scored_ = seen;
  return top.BestFirst();
}

}  // namespace tunefleet
