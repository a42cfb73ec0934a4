#include "tracker/store/sqlite_test_util.h"

#include <sqlite3.h>

#include "gtest/gtest.h"

namespace tunefleet {

void ExecSqlBehindTheStore(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* error = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK)
      << (error != nullptr ? error : "");
  sqlite3_free(error);
  sqlite3_close(db);
}

}  // namespace tunefleet
