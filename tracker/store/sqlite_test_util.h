// Test scaffolding for the SQLite store's tests: SQL run on a store's file
// behind the store's back, as damage or an older or newer release would.
#ifndef TUNEFLEET_TRACKER_STORE_SQLITE_TEST_UTIL_H_
#define TUNEFLEET_TRACKER_STORE_SQLITE_TEST_UTIL_H_

#include <string>

namespace tunefleet {

// Runs `sql` on the SQLite file at `path`; a failure is a test failure
// (GoogleTest assertions) with SQLite's message.
void ExecSqlBehindTheStore(const std::string& path, const std::string& sql);

}  // namespace tunefleet

#endif  // TUNEFLEET_TRACKER_STORE_SQLITE_TEST_UTIL_H_
