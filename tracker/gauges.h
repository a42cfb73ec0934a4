// RefreshGauges: the tracker's point-in-time metrics (workers by role, key
// and state; queue depth and age; jobs by state and priority class, their
// progress, and best GFLOPS)
// computed from the job table and the worker registry and handed to the
// metrics interface as one snapshot each. The Scheduler calls it about once
// a second from Tick, under its mutex.
#ifndef TUNEFLEET_TRACKER_GAUGES_H_
#define TUNEFLEET_TRACKER_GAUGES_H_

#include "tracker/job_table.h"
#include "tracker/metrics_interface.h"
#include "tracker/worker_registry.h"

namespace tunefleet {

// `now` is steady time (for queue ages).
void RefreshGauges(const JobTable& jobs, const WorkerRegistry& workers, double now,
                   TrackerMetricsInterface& metrics);

}  // namespace tunefleet

#endif  // TUNEFLEET_TRACKER_GAUGES_H_
