// GivenTuner: proposes exactly the configs it is given, in that order, and
// nothing else (skipping indices marked visited; configs the space declares
// equivalent are each measured when given, ConfigSpace::EquivalentIndices). For re-measuring known
// configs on the fleet (`tunefleet measure --key`): the job's search is
// those configs, and its validation re-measures them.
//
//   TF_ASSIGN_OR_RETURN(std::unique_ptr<GivenTuner> tuner,
//                       GivenTuner::Create(space, {17, 4, 230}));
#ifndef TUNEFLEET_TUNER_CORE_TUNERS_GIVEN_TUNER_H_
#define TUNEFLEET_TUNER_CORE_TUNERS_GIVEN_TUNER_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "tuner_core/space/config_space.h"
#include "tuner_core/tuners/tuner.h"

namespace tunefleet {

class GivenTuner : public Tuner {
 public:
  // InvalidArgument for an empty list or an index outside the space (named).
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<GivenTuner>> Create(
      const ConfigSpace& space, std::vector<int64_t> indices);

  bool HasNext() const override;

 protected:
  std::vector<Config> ProposeBatch(int batch_size) override;

 private:
  GivenTuner(const ConfigSpace& space, std::vector<int64_t> indices);

  const std::vector<int64_t> indices_;
  size_t next_ = 0;  // indices_[0, next_) were proposed or skipped
};

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_TUNERS_GIVEN_TUNER_H_
