#include "tuner_core/tuners/given_tuner.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace tunefleet {

absl::StatusOr<std::unique_ptr<GivenTuner>> GivenTuner::Create(const ConfigSpace& space,
                                                               std::vector<int64_t> indices) {
  if (indices.empty()) {
    return absl::InvalidArgumentError("tuner 'given' needs the config indices to propose");
  }
  for (int64_t index : indices) {
    if (index < 0 || index >= space.size()) {
      return absl::InvalidArgumentError(absl::StrCat("tuner 'given': config index ", index,
                                                     " is outside the space (0..", space.size() - 1,
                                                     ")"));
    }
  }
  return std::unique_ptr<GivenTuner>(new GivenTuner(space, std::move(indices)));
}

GivenTuner::GivenTuner(const ConfigSpace& space, std::vector<int64_t> indices)
    : Tuner(space), indices_(std::move(indices)) {}

bool GivenTuner::HasNext() const {
  for (size_t i = next_; i < indices_.size(); ++i) {
    if (!IsVisited(indices_[i])) return true;
  }
  return false;
}

std::vector<Config> GivenTuner::ProposeBatch(int batch_size) {
  std::vector<Config> batch;
  while (static_cast<int>(batch.size()) < batch_size && next_ < indices_.size()) {
    const int64_t index = indices_[next_++];
    if (IsVisited(index)) continue;        // also a repeated index
    batch.push_back(ProposeExact(index));  // equivalent configs too, if given
  }
  return batch;
}

}  // namespace tunefleet
