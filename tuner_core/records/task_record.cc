#include "tuner_core/records/task_record.h"

namespace tunefleet {

Record RecordOf(const Task& task, const Config& config, const MeasureResult& result) {
  Record record;
  record.target = task.target();
  record.task_name = task.name();
  record.workload_name = task.workload().name();
  record.workload_args = task.workload().args();
  record.config = config.ToJson();
  record.result = result;
  return record;
}

bool IsRecordOf(const Record& record, const Task& task) {
  return record.task_name == task.name() && record.target == task.target() &&
         record.workload_args == task.workload().args();
}

}  // namespace tunefleet
