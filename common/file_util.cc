#include "common/file_util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace tunefleet {
namespace {

[[nodiscard]] absl::Status Failed(const std::string& path, const char* step) {
  return absl::UnavailableError(
      absl::StrCat("cannot replace ", path, ": ", step, ": ", std::strerror(errno)));
}

[[nodiscard]] absl::Status WriteAll(int fd, std::string_view data, const std::string& path) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Failed(path, "write");
    data.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

}  // namespace

[[nodiscard]] absl::Status ReplaceFileAtomically(const std::string& path, std::string_view content,
                                                 mode_t mode) {
  std::string temp = path + ".tmp.XXXXXX";
  const int fd = ::mkstemp(temp.data());
  if (fd < 0) return Failed(path, "create a temporary file beside it");
  absl::Status status = WriteAll(fd, content, path);
  if (status.ok() && ::fchmod(fd, mode) != 0) status = Failed(path, "chmod");
  if (status.ok() && ::fsync(fd) != 0) status = Failed(path, "fsync");
  if (::close(fd) != 0 && status.ok()) status = Failed(path, "close");
  if (status.ok() && ::rename(temp.c_str(), path.c_str()) != 0) status = Failed(path, "rename");
  if (!status.ok()) {
    ::unlink(temp.c_str());
    return status;
  }
  // The rename is durable once the directory is.
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash + 1);
  const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    ::fsync(dir_fd);
    ::close(dir_fd);
  }
  return absl::OkStatus();
}

namespace {

// ReadFileToString, and with `owner_only` ReadPrivateFileToString.
[[nodiscard]] absl::StatusOr<std::string> ReadWholeFile(const std::string& path, int64_t max_bytes,
                                                        bool owner_only) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int error = errno;
    return absl::ErrnoToStatus(error, absl::StrCat("cannot read ", path));
  }
  auto fail = [&](absl::Status status) {
    ::close(fd);
    return status;
  };
  auto over_cap = [&](int64_t size, bool at_least) {
    return absl::InvalidArgumentError(absl::StrCat(path, " is ", at_least ? "over " : "", size,
                                                   " bytes, over the cap of ", max_bytes,
                                                   " bytes for this kind of file"));
  };
  // Check the file opened, not the path (which could change in between).
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    return fail(absl::ErrnoToStatus(errno, absl::StrCat("cannot stat ", path)));
  }
  if (!S_ISREG(st.st_mode)) {
    return fail(
        absl::FailedPreconditionError(absl::StrCat("cannot read ", path, ": not a regular file")));
  }
  if (owner_only && (st.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    return fail(absl::FailedPreconditionError(absl::StrCat(
        path, " is ", (st.st_mode & (S_IRGRP | S_IROTH)) != 0 ? "readable" : "writable", " by ",
        (st.st_mode & S_IRWXO) != 0 ? "other users" : "its group", " (mode ",
        absl::StrFormat("%03o", st.st_mode & 0777), "); run: chmod 600 ", path)));
  }
  if (st.st_size > max_bytes) return fail(over_cap(st.st_size, false));
  std::string content;
  content.reserve(static_cast<size_t>(st.st_size));
  char buffer[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail(absl::ErrnoToStatus(errno, absl::StrCat("cannot read ", path)));
    if (n == 0) break;
    if (static_cast<int64_t>(content.size()) + n > max_bytes) {
      return fail(over_cap(max_bytes, true));
    }
    content.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  return content;
}

}  // namespace

[[nodiscard]] absl::StatusOr<std::string> ReadFileToString(const std::string& path,
                                                           int64_t max_bytes) {
  return ReadWholeFile(path, max_bytes, /*owner_only=*/false);
}

[[nodiscard]] absl::StatusOr<std::string> ReadPrivateFileToString(const std::string& path,
                                                                  int64_t max_bytes) {
  return ReadWholeFile(path, max_bytes, /*owner_only=*/true);
}

}  // namespace tunefleet
