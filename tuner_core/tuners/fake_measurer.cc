#include "tuner_core/tuners/fake_measurer.h"

#include <utility>

#include "gtest/gtest.h"

namespace tunefleet {

MeasureResult FakeCost(double seconds) {
  MeasureResult result;
  result.costs = {seconds, seconds, seconds};
  result.all_cost = 3 * seconds;
  return result;
}

MeasureResult FakeFailure(MeasureErrorNo error_no, const std::string& message) {
  MeasureResult result;
  result.costs = {1e9};
  result.error_no = error_no;
  result.error_msg = message;
  return result;
}

ConfigSpace TileByMrSpace() {
  ConfigSpace space;
  EXPECT_TRUE(space.DefineSplit("tile", 32).ok());
  EXPECT_TRUE(space.DefineKnob("mr", {4, 6, 8}).ok());
  return space;
}

std::vector<int64_t> ConfigIndices(const std::vector<Config>& configs) {
  std::vector<int64_t> out;
  out.reserve(configs.size());
  for (const Config& c : configs) out.push_back(c.index());
  return out;
}

TuneOptions QuietTuneOptions(int64_t n_trial, int batch_size) {
  TuneOptions options;
  options.n_trial = n_trial;
  options.batch_size = batch_size;
  options.show_progress = false;
  return options;
}

FakeMeasurer::FakeMeasurer(ResultFunction result_of) : result_of_(std::move(result_of)) {}

std::vector<MeasureResult> FakeMeasurer::Measure(const std::vector<Config>& configs) {
  std::vector<MeasureResult> results;
  std::vector<int64_t> indices;
  for (const Config& config : configs) {
    results.push_back(result_of_(config));
    indices.push_back(config.index());
  }
  batches_.push_back(std::move(indices));
  return results;
}

std::vector<int64_t> FakeMeasurer::measured_indices() const {
  std::vector<int64_t> all;
  for (const auto& batch : batches_) all.insert(all.end(), batch.begin(), batch.end());
  return all;
}

}  // namespace tunefleet
