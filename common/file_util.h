// Whole files in and out: ReplaceFileAtomically, so that no reader ever sees
// a file half written (the one writer for token files, the tracker's port
// file, `up`'s address file and rewritten record logs), and ReadFileToString,
// the one reader of whole files, which refuses a file over a size cap chosen
// per kind of file (a token file is never a gigabyte; one that is must not
// take the daemon's memory with it).
//
//   TF_RETURN_IF_ERROR(ReplaceFileAtomically(dir + "/agent.token", token + "\n", 0600));
//   TF_ASSIGN_OR_RETURN(std::string pem, ReadFileToString(cert_path, kMaxPemFileBytes));
#ifndef TUNEFLEET_COMMON_FILE_UTIL_H_
#define TUNEFLEET_COMMON_FILE_UTIL_H_

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tunefleet {

// Writes `content` to a temporary file beside `path` (created with mode
// 0600, then given `mode`), fsyncs it, renames it over `path` and fsyncs the
// directory. On any failure the temporary is removed, `path` is left as it
// was, and the error (Unavailable) names the file and the step that failed.
[[nodiscard]] absl::Status ReplaceFileAtomically(const std::string& path, std::string_view content,
                                                 mode_t mode = 0644);

// Size caps for ReadFileToString, one per kind of file.
inline constexpr int64_t kMaxSmallFileBytes = int64_t{64} << 10;   // address, port files
inline constexpr int64_t kMaxTokenFileBytes = int64_t{1} << 20;    // role tokens
inline constexpr int64_t kMaxPemFileBytes = int64_t{1} << 20;      // TLS certs, keys, CAs
inline constexpr int64_t kMaxConfigFileBytes = int64_t{16} << 20;  // JSON configs, /proc files
inline constexpr int64_t kMaxLogFileBytes = int64_t{256} << 20;    // daemon logs (tests)
inline constexpr int64_t kMaxArtifactBytes = int64_t{1} << 30;     // compiled kernels
inline constexpr int64_t kMaxModelFileBytes = int64_t{2} << 30;    // ONNX models
inline constexpr int64_t kMaxRecordLogBytes = int64_t{4} << 30;    // records logs (JSON lines)

// The whole content of `path`, if it holds at most `max_bytes`. Checks the
// size before reading and counts while reading (a file that grows, or a
// /proc file that reports size 0, is cut off at the cap too). Errors name the
// file: NotFound, PermissionDenied, FailedPrecondition (not a regular file),
// InvalidArgument (over the cap: "<path> is N bytes, over the cap of M
// bytes"), Unavailable (a read failed).
[[nodiscard]] absl::StatusOr<std::string> ReadFileToString(const std::string& path,
                                                           int64_t max_bytes);

// ReadFileToString for secrets (token files, signing keys): also
// FailedPrecondition if the file's group or other users may read or write it
// ("<path> is readable by its group (mode 640); run: chmod 600 <path>"),
// checked on the file opened, not the path.
[[nodiscard]] absl::StatusOr<std::string> ReadPrivateFileToString(const std::string& path,
                                                                  int64_t max_bytes);

}  // namespace tunefleet

#endif  // TUNEFLEET_COMMON_FILE_UTIL_H_
