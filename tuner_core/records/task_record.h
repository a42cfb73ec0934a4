// RecordOf: the record of one measured config of a task (its target,
// template, workload and args, the config's JSON and the result), as the
// local tuning loop and the benches write them; IsRecordOf: whether a record
// read back is one of that task's (what resuming from a log keeps).
#ifndef TUNEFLEET_TUNER_CORE_RECORDS_TASK_RECORD_H_
#define TUNEFLEET_TUNER_CORE_RECORDS_TASK_RECORD_H_

#include "tuner_core/measure/measure.h"
#include "tuner_core/records/record.h"
#include "tuner_core/space/config_space.h"
#include "tuner_core/templates/task.h"

namespace tunefleet {

Record RecordOf(const Task& task, const Config& config, const MeasureResult& result);

// Whether `record` was measured for `task`: the same template, target and
// workload args. Its config may still be of an older space
// (task.space().FromJson says).
bool IsRecordOf(const Record& record, const Task& task);

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_RECORDS_TASK_RECORD_H_
