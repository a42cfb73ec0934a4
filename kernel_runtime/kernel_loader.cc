#include "kernel_runtime/kernel_loader.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"

namespace tunefleet {
namespace {

std::string DlErrorText() {
  const char* text = dlerror();
  return text != nullptr ? text : "(no dlerror text)";
}

[[nodiscard]] absl::Status WriteAllToFile(int fd, absl::string_view bytes, absl::string_view what) {
  while (!bytes.empty()) {
    ssize_t written = write(fd, bytes.data(), bytes.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      return absl::InternalError(
          absl::StrCat("writing the shared object to ", what, " failed: ", std::strerror(errno)));
    }
    bytes.remove_prefix(static_cast<size_t>(written));
  }
  return absl::OkStatus();
}

std::string FdPath(int fd) { return absl::StrCat("/proc/self/fd/", fd); }

// True when glibc already has an object loaded under `path`: dlopen(path)
// would then return that object instead of reading the file now there.
bool PathAlreadyLoaded(const std::string& path) {
  void* existing = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (existing == nullptr) {
    dlerror();  // clear the "not loaded" error so it does not leak into ours
    return false;
  }
  dlclose(existing);  // drop the reference RTLD_NOLOAD just took
  return true;
}

[[nodiscard]] absl::Status DlopenError(absl::string_view name, size_t size,
                                       const std::string& text) {
  return absl::InvalidArgumentError(
      absl::StrCat("dlopen of shared object ", name, " (", size, " bytes) failed: ", text));
}

}  // namespace

absl::StatusOr<SharedObject> SharedObject::LoadFromBytes(absl::string_view bytes,
                                                         absl::string_view name_for_errors) {
  std::string name(name_for_errors.empty() ? "<unnamed>" : name_for_errors);
  if (bytes.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("shared object ", name, " is empty"));
  }

  int fd = memfd_create("tunefleet-kernel", MFD_CLOEXEC);
  if (fd >= 0) {
    if (absl::Status written = WriteAllToFile(fd, bytes, "a memory file"); !written.ok()) {
      close(fd);
      return written;
    }
    // A stale object (one whose dlclose did not unload it) may still be
    // registered under this fd's path; move to a fresh descriptor number.
    for (int attempt = 0; attempt < 16 && PathAlreadyLoaded(FdPath(fd)); ++attempt) {
      int moved = fcntl(fd, F_DUPFD_CLOEXEC, fd + 1);
      close(fd);
      if (moved < 0) {
        return absl::InternalError(
            absl::StrCat("duplicating the memory file descriptor failed: ", std::strerror(errno)));
      }
      fd = moved;
    }
    dlerror();
    void* handle = dlopen(FdPath(fd).c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      std::string text = DlErrorText();
      close(fd);
      return DlopenError(name, bytes.size(), text);
    }
    return SharedObject(handle, fd, std::move(name));
  }

  // Fallback: a temporary file, unlinked as soon as it is mapped.
  const int memfd_errno = errno;
  const char* tmpdir = std::getenv("TMPDIR");
  std::string path =
      absl::StrCat((tmpdir != nullptr && *tmpdir) ? tmpdir : "/tmp", "/tunefleet-kernel-XXXXXX.so");
  fd = mkstemps(path.data(), /*suffixlen=*/3);
  if (fd < 0) {
    return absl::InternalError(absl::StrCat(
        "cannot load shared object ", name, ": memfd_create failed (", std::strerror(memfd_errno),
        ") and so did creating a temporary file from ", path, " (", std::strerror(errno), ")"));
  }
  absl::Status written = WriteAllToFile(fd, bytes, path);
  close(fd);
  if (!written.ok()) {
    unlink(path.c_str());
    return written;
  }
  dlerror();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  std::string text = handle == nullptr ? DlErrorText() : "";
  unlink(path.c_str());
  if (handle == nullptr) return DlopenError(name, bytes.size(), text);
  return SharedObject(handle, /*memfd=*/-1, std::move(name));
}

SharedObject::SharedObject(void* handle, int memfd, std::string name)
    : handle_(handle), memfd_(memfd), name_(std::move(name)) {}

SharedObject::SharedObject(SharedObject&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)),
      memfd_(std::exchange(other.memfd_, -1)),
      name_(std::move(other.name_)) {}

SharedObject& SharedObject::operator=(SharedObject&& other) noexcept {
  if (this != &other) {
    Reset();
    handle_ = std::exchange(other.handle_, nullptr);
    memfd_ = std::exchange(other.memfd_, -1);
    name_ = std::move(other.name_);
  }
  return *this;
}

SharedObject::~SharedObject() { Reset(); }

void SharedObject::Reset() {
  if (handle_ != nullptr) dlclose(handle_);
  if (memfd_ >= 0) close(memfd_);
  handle_ = nullptr;
  memfd_ = -1;
}

absl::StatusOr<void*> SharedObject::FindSymbol(const std::string& symbol) const {
  if (handle_ == nullptr) {
    return absl::FailedPreconditionError("FindSymbol on an unloaded (moved-from) SharedObject");
  }
  dlerror();
  void* address = dlsym(handle_, symbol.c_str());
  if (address == nullptr) {
    // A symbol may legitimately be NULL (e.g. a weak undefined one); only
    // dlerror distinguishes that from "not there", and for an entry point
    // NULL is useless either way.
    const char* text = dlerror();
    return absl::NotFoundError(absl::StrCat("symbol \"", symbol, "\" not found in shared object ",
                                            name_,
                                            text != nullptr ? absl::StrCat(": ", text) : ""));
  }
  return address;
}

absl::StatusOr<TfKernelEntry> SharedObject::FindKernelEntry(const std::string& symbol) const {
  absl::StatusOr<void*> address = FindSymbol(symbol);
  if (!address.ok()) return address.status();
  return reinterpret_cast<TfKernelEntry>(*address);
}

}  // namespace tunefleet
