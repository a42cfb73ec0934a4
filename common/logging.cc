#include "common/logging.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "common/clock.h"

namespace tunefleet {
namespace {

std::atomic<int> g_min_level{-1};

int LevelFromEnv() {
  const char* env = std::getenv("TUNEFLEET_LOG_LEVEL");
  if (env == nullptr) return static_cast<int>(LogLevel::kInfo);
  if (std::strcmp(env, "debug") == 0) return static_cast<int>(LogLevel::kDebug);
  if (std::strcmp(env, "warning") == 0) return static_cast<int>(LogLevel::kWarning);
  if (std::strcmp(env, "error") == 0) return static_cast<int>(LogLevel::kError);
  return static_cast<int>(LogLevel::kInfo);
}

const char* LevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return "DEBUG";
    case LogLevel::kInfo:
      return "INFO";
    case LogLevel::kWarning:
      return "WARNING";
    case LogLevel::kError:
      return "ERROR";
  }
  return "?";
}

}  // namespace

LogLevel MinLogLevel() {
  int level = g_min_level.load(std::memory_order_relaxed);
  if (level < 0) {
    level = LevelFromEnv();
    g_min_level.store(level, std::memory_order_relaxed);
  }
  return static_cast<LogLevel>(level);
}

void SetMinLogLevel(LogLevel level) {
  g_min_level.store(static_cast<int>(level), std::memory_order_relaxed);
}

LogMessage::LogMessage(LogLevel level, const char* file, int line) : level_(level) {
  const char* base = std::strrchr(file, '/');
  base = base ? base + 1 : file;
  const int64_t wall_nanos = SystemClock().WallNanos();
  std::time_t secs = static_cast<std::time_t>(wall_nanos / 1'000'000'000);
  int millis = static_cast<int>((wall_nanos / 1'000'000) % 1000);
  std::tm tm_utc;
  gmtime_r(&secs, &tm_utc);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm_utc);
  char prefix[96];
  std::snprintf(prefix, sizeof(prefix), "%s.%03dZ %s %s:%d] ", stamp, millis, LevelName(level_),
                base, line);
  stream_ << prefix;
}

LogMessage::~LogMessage() {
  stream_ << '\n';
  const std::string text = stream_.str();
  std::fwrite(text.data(), 1, text.size(), stderr);
}

}  // namespace tunefleet
