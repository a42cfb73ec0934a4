// Replacing a file so that no reader ever sees it half written: the one
// writer for token files, the tracker's port file, `up`'s address file and
// rewritten record logs.
//
//   TF_RETURN_IF_ERROR(ReplaceFileAtomically(dir + "/agent.token", token + "\n", 0600));
#ifndef TUNEFLEET_COMMON_FILE_UTIL_H_
#define TUNEFLEET_COMMON_FILE_UTIL_H_

#include <sys/types.h>

#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace tunefleet {

// Writes `content` to a temporary file beside `path` (created with mode
// 0600, then given `mode`), fsyncs it, renames it over `path` and fsyncs the
// directory. On any failure the temporary is removed, `path` is left as it
// was, and the error (Unavailable) names the file and the step that failed.
[[nodiscard]] absl::Status ReplaceFileAtomically(const std::string& path, std::string_view content,
                                                 mode_t mode = 0644);

}  // namespace tunefleet

#endif  // TUNEFLEET_COMMON_FILE_UTIL_H_
