// FakeMeasurer: a MeasurerInterface for tests. The result of each config is
// a function of the config chosen by the test (typically of its index), and
// every call is recorded so tests can check what was measured, and in which
// batches. QuietTuneOptions() gives the options such a test tunes with, and
// TileByMrSpace() a small space to tune in.
#ifndef TUNEFLEET_TUNER_CORE_TUNERS_FAKE_MEASURER_H_
#define TUNEFLEET_TUNER_CORE_TUNERS_FAKE_MEASURER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tuner_core/measure/measure.h"
#include "tuner_core/space/config_space.h"
#include "tuner_core/tuners/tuner.h"

namespace tunefleet {

// A successful result costing `seconds` per run (three equal repeats).
MeasureResult FakeCost(double seconds);
// A failed result: costs {1e9}, as a real measurer reports it.
MeasureResult FakeFailure(MeasureErrorNo error_no, const std::string& message = "fake failure");

// A space of 18 configs for tuner tests: split "tile" of 32 (6 ways) x
// knob "mr" {4, 6, 8}.
ConfigSpace TileByMrSpace();
// The indices of `configs`, in order.
std::vector<int64_t> ConfigIndices(const std::vector<Config>& configs);

// Tune() options for a test: `n_trial` trials in batches of `batch_size`,
// no progress lines.
TuneOptions QuietTuneOptions(int64_t n_trial, int batch_size);

class FakeMeasurer : public MeasurerInterface {
 public:
  using ResultFunction = std::function<MeasureResult(const Config& config)>;

  explicit FakeMeasurer(ResultFunction result_of);

  std::vector<MeasureResult> Measure(const std::vector<Config>& configs) override;

  // Config indices of each Measure() call, in call order.
  const std::vector<std::vector<int64_t>>& batches() const { return batches_; }
  // Every measured index, in order.
  std::vector<int64_t> measured_indices() const;

 private:
  ResultFunction result_of_;
  std::vector<std::vector<int64_t>> batches_;
};

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_TUNERS_FAKE_MEASURER_H_
