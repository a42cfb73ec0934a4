// RecordOf: the record of one measured config of a task (its target,
// template, workload and args, the config's JSON and the result), as the
// local tuning loop and the benches write them.
#ifndef TUNEFLEET_TUNER_CORE_RECORDS_TASK_RECORD_H_
#define TUNEFLEET_TUNER_CORE_RECORDS_TASK_RECORD_H_

#include "tuner_core/measure/measure.h"
#include "tuner_core/records/record.h"
#include "tuner_core/space/config_space.h"
#include "tuner_core/templates/task.h"

namespace tunefleet {

Record RecordOf(const Task& task, const Config& config, const MeasureResult& result);

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_RECORDS_TASK_RECORD_H_
