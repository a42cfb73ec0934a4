// The tracker's scheduling flags (heartbeats, timeouts, measurement
// isolation, agent calibration and quarantine) and the SchedulerOptions
// they make, so tracker_main stays flags -> options -> server.
//
//   absl::ParseCommandLine(argc, argv);
//   options.scheduler = SchedulerOptionsFromFlags();
#ifndef TUNEFLEET_TRACKER_SCHEDULER_FLAGS_H_
#define TUNEFLEET_TRACKER_SCHEDULER_FLAGS_H_

#include "tracker/scheduler_options.h"

namespace tunefleet {

// The flags' values over SchedulerOptions' defaults (validated by
// Scheduler::Create).
SchedulerOptions SchedulerOptionsFromFlags();

}  // namespace tunefleet

#endif  // TUNEFLEET_TRACKER_SCHEDULER_FLAGS_H_
