#include "tuner_core/tuners/tuner.h"

#include <algorithm>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/check.h"
#include "common/clock.h"
#include "common/logging.h"
#include "tuner_core/tuners/search_util.h"

namespace tunefleet {
namespace {

// AutoTVM warns after this many failed trials in a row: by then the cause is
// almost always systematic (bad target string, dead device), and a long run
// of "0.00 GFLOPS" with no reason is what users complain about.
constexpr int64_t kConsecutiveErrorWarning = 150;

// 1 / mean cost of a successful result; 0 for a failure (never the best).
}  // namespace

Tuner::Tuner(const ConfigSpace& space) : space_(space) {}

Tuner::~Tuner() = default;

void Tuner::MarkVisited(int64_t index) {
  // Records from an older version of a template can name indices the space
  // no longer has; they simply cannot be proposed anyway.
  if (index < 0 || index >= space_.size()) return;
  // Configs that build the same kernel (ConfigSpace::EquivalentIndices) are
  // measured once: visiting one visits them all.
  for (int64_t same : space_.EquivalentIndices(index)) visited_.insert(same);
}

int64_t Tuner::DrawUnvisited(std::mt19937_64& engine) const {
  const uint64_t size = static_cast<uint64_t>(space().size());
  for (int attempt = 0; attempt < 64; ++attempt) {
    const int64_t index = static_cast<int64_t>(UniformBelow(engine, size));
    if (!IsVisited(index)) return index;
  }
  // Mostly visited: walk from a random start to the next free index.
  const int64_t start = static_cast<int64_t>(UniformBelow(engine, size));
  for (int64_t step = 0; step < space().size(); ++step) {
    const int64_t index = (start + step) % space().size();
    if (!IsVisited(index)) return index;
  }
  return -1;
}

void Tuner::SetFirstConfigs(std::vector<Config> configs) {
  first_indices_.clear();
  for (const Config& c : configs) first_indices_.push_back(c.index());
  first_.assign(std::make_move_iterator(configs.begin()), std::make_move_iterator(configs.end()));
}

std::vector<Config> Tuner::TakeFirstConfigs(int max) {
  std::vector<Config> batch;
  while (static_cast<int>(batch.size()) < max && !first_.empty()) {
    Config config = std::move(first_.front());
    first_.pop_front();
    if (IsVisited(config.index())) continue;
    MarkVisited(config.index());
    if (config_check_ && !config_check_(config).ok()) {
      ++refused_before_measuring_;
      continue;
    }
    batch.push_back(std::move(config));
  }
  return batch;
}

std::vector<Config> Tuner::NextBatch(int batch_size) {
  std::vector<Config> batch = TakeFirstConfigs(batch_size);
  if (!config_check_) {
    if (static_cast<int>(batch.size()) < batch_size) {
      for (Config& c : ProposeBatch(batch_size - static_cast<int>(batch.size())))
        batch.push_back(std::move(c));
    }
    return batch;
  }
  int64_t refused_in_a_row = 0;
  while (static_cast<int>(batch.size()) < batch_size && HasNext() &&
         refused_in_a_row < kMaxRefusedPerBatch) {
    std::vector<Config> proposed = ProposeBatch(batch_size - static_cast<int>(batch.size()));
    if (proposed.empty()) break;
    for (Config& config : proposed) {
      if (config_check_(config).ok()) {
        batch.push_back(std::move(config));
        refused_in_a_row = 0;
      } else {
        ++refused_in_a_row;
        ++refused_before_measuring_;
      }
    }
  }
  return batch;
}

Config Tuner::ProposeExact(int64_t index) {
  absl::StatusOr<Config> config = space_.Get(index);
  TF_CHECK(config.ok());  // callers choose indices inside the space
  visited_.insert(index);
  return *std::move(config);
}

Config Tuner::Propose(int64_t index) {
  absl::StatusOr<Config> config = space_.Get(index);
  TF_CHECK(config.ok());  // callers choose indices inside the space
  MarkVisited(index);
  return *std::move(config);
}

void Tuner::RecordBatch(const std::vector<TrialResult>& batch, double flops) {
  for (size_t k = 0; k < batch.size(); ++k) {
    const MeasureResult& result = batch[k].result;
    if (result.ok()) {
      consecutive_errors_ = 0;
    } else if (++consecutive_errors_ == kConsecutiveErrorWarning) {
      TF_LOG(WARNING) << kConsecutiveErrorWarning
                      << " trials in a row failed; the last: config=" << batch[k].config.index()
                      << " error=" << MeasureErrorName(result.error_no) << " msg=\""
                      << result.error_msg << "\"";
    }
    if (best_.Offer(result)) {
      best_flops_ = flops / best_.cost_s();
      best_config_ = batch[k].config;
    }
  }
}

absl::Status Tuner::Tune(MeasurerInterface& measurer, const TuneOptions& options,
                         const std::vector<TuneCallback>& callbacks) {
  if (options.n_trial < 0) {
    return absl::InvalidArgumentError(absl::StrCat("n_trial must be >= 0, got ", options.n_trial));
  }
  if (options.batch_size < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("batch_size must be >= 1, got ", options.batch_size));
  }
  if (options.flops < 0) {
    return absl::InvalidArgumentError(absl::StrCat("flops must be >= 0, got ", options.flops));
  }
  std::ostream& progress = options.progress_stream ? *options.progress_stream : std::cerr;
  // Wall time only feeds the progress display, never a decision.
  const Stopwatch watch;
  bool progress_shown = false;

  int64_t done = 0;  // trials of this call
  while (done < options.n_trial && HasNext()) {
    const int64_t wanted = std::min<int64_t>(options.batch_size, options.n_trial - done);
    std::vector<Config> configs = NextBatch(static_cast<int>(wanted));
    TF_CHECK(static_cast<int64_t>(configs.size()) <= wanted);
    if (configs.empty()) break;  // the strategy ran out after all

    std::vector<MeasureResult> results = measurer.Measure(configs);
    if (results.size() != configs.size()) {
      return absl::InternalError(absl::StrCat("measurer returned ", results.size(), " results for ",
                                              configs.size(), " configs"));
    }
    std::vector<TrialResult> batch;
    batch.reserve(configs.size());
    // AutoTVM's progress bar shows the last successful trial of the batch.
    double current_gflops = 0.0;
    for (size_t k = 0; k < configs.size(); ++k) {
      if (results[k].ok()) current_gflops = GflopsOf(options.flops, results[k].MeanCost());
      batch.push_back(TrialResult{std::move(configs[k]), std::move(results[k])});
    }
    RecordBatch(batch, options.flops);
    done += static_cast<int64_t>(batch.size());

    Update(batch);
    for (const TuneCallback& callback : callbacks) callback(batch);

    if (options.show_progress) {
      const double elapsed = watch.ElapsedSeconds();
      progress << '\r'
               << ProgressLine(options.task_label, current_gflops, best_flops_ / 1e9, done,
                               options.n_trial, elapsed)
               << std::flush;
      progress_shown = true;
    }
    if (options.early_stopping >= 0 && trials_done() - best_trial() >= options.early_stopping) {
      break;
    }
  }
  if (progress_shown) progress << '\n' << std::flush;
  return absl::OkStatus();
}

std::string ProgressLine(const std::string& task_label, double current_gflops, double best_gflops,
                         int64_t done, int64_t total, double elapsed_s) {
  return absl::StrFormat("%s  Current/Best: %7.2f/%7.2f GFLOPS | Progress: (%d/%d) | %.2f s",
                         task_label, current_gflops, best_gflops, done, total, elapsed_s);
}

}  // namespace tunefleet
