// Minimal structured logging to stderr: one line per event, with a level,
// a wall-clock timestamp and key=value fields. Abseil 20220623 has no
// absl/log, so this is the project's single logging entry point.
//
//   TF_LOG(INFO) << "trial done job=" << job_id << " trial=" << trial_id;
#ifndef TUNEFLEET_COMMON_LOGGING_H_
#define TUNEFLEET_COMMON_LOGGING_H_

#include <sstream>
#include <string>

namespace tunefleet {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3 };

// Messages below this level are dropped. Defaults to kInfo; the
// TUNEFLEET_LOG_LEVEL environment variable (debug|info|warning|error)
// overrides it at first use.
LogLevel MinLogLevel();
void SetMinLogLevel(LogLevel level);

class LogMessage {
 public:
  LogMessage(LogLevel level, const char* file, int line);
  ~LogMessage();
  std::ostream& stream() { return stream_; }

 private:
  LogLevel level_;
  std::ostringstream stream_;
};

}  // namespace tunefleet

#define TF_LOG_LEVEL_DEBUG ::tunefleet::LogLevel::kDebug
#define TF_LOG_LEVEL_INFO ::tunefleet::LogLevel::kInfo
#define TF_LOG_LEVEL_WARNING ::tunefleet::LogLevel::kWarning
#define TF_LOG_LEVEL_ERROR ::tunefleet::LogLevel::kError

#define TF_LOG(level)                                      \
  if (TF_LOG_LEVEL_##level < ::tunefleet::MinLogLevel()) { \
  } else                                                   \
    ::tunefleet::LogMessage(TF_LOG_LEVEL_##level, __FILE__, __LINE__).stream()

#endif  // TUNEFLEET_COMMON_LOGGING_H_
