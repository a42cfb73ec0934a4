// Calibration: how fast and how steady this host's CPU is right now, from a
// fixed kernel that owes nothing to TuneFleet's compiler or to the kernels
// being tuned, so two agents of one device key (or one agent now and an hour
// ago) can be compared. The tracker keeps each agent's figures and stops
// sending measurements to one that is much noisier or slower than its key's
// others, or that drifted from its own first figure (tracker/
// agent_calibration.h).
//
//   RealClock clock;
//   TF_ASSIGN_OR_RETURN(CalibrationFigures figures, RunCalibration({}, clock));
//   // figures.gflops: the kernel's throughput; figures.noise: the relative
//   // spread of its repeats.
//
// The kernel: eight independent chains of 8-wide multiply-adds (x = a*x + b)
// on one thread; a fixed FLOP count per call, nothing read from memory, so
// its speed is the core's arithmetic rate at its present clock, and its
// spread is what other tenants and frequency changes add. It is timed by the
// same time evaluator as kernels (min_repeat_ms per repeat, min and max
// dropped); the throughput is that of the fastest kept repeat (what the
// core can do at its present clock; a neighbour's burst does not lower
// it, throttling does), the spread is 1.4826 x the median absolute deviation of the kept
// costs over their median (the standard deviation's robust estimate, so a
// single interrupt does not make a host "noisy").
#ifndef TUNEFLEET_DEVICE_AGENT_CALIBRATION_H_
#define TUNEFLEET_DEVICE_AGENT_CALIBRATION_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "common/clock.h"

namespace tunefleet {

struct CalibrationOptions {
  int repeat = 12;         // timed repeats, at least 3
  int min_repeat_ms = 20;  // each repeat lasts at least this long, >= 1

  [[nodiscard]] absl::Status Validate() const;
};

struct CalibrationFigures {
  double gflops = 0;  // FLOPs of one call / the fastest kept repeat's cost per call
  double noise = 0;   // robust spread of the repeats' costs / their median (see below)
  int repeats = 0;    // repeats timed
};

// FLOPs of one call of the calibration kernel.
int64_t CalibrationKernelFlops();

// Times the kernel on the calling thread. InvalidArgument for bad options;
// Internal when the timing fails (e.g. a clock that reads 0).
[[nodiscard]] absl::StatusOr<CalibrationFigures> RunCalibration(const CalibrationOptions& options,
                                                                ClockInterface& clock);

}  // namespace tunefleet

#endif  // TUNEFLEET_DEVICE_AGENT_CALIBRATION_H_
