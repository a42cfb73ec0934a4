#include "tracker/auth.h"

#include <errno.h>
#include <fcntl.h>
#include <grpcpp/server_context.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/file_util.h"
#include "common/status_macros.h"

namespace tunefleet {
namespace {

constexpr Role kAllRoles[] = {Role::kUser, Role::kBuilder, Role::kAgent, Role::kTuner,
                              Role::kAdmin};
constexpr size_t kGeneratedTokenBytes = 32;

std::string ErrnoText() { return strerror(errno); }

// 1 if equal, 0 if not. The loop runs over all of `stored` whatever the
// contents, so timing says nothing about where a guess went wrong; it depends
// only on the lengths.
unsigned ConstantTimeEquals(absl::string_view presented, absl::string_view stored) {
  unsigned char difference = presented.size() != stored.size() ? 1 : 0;
  for (size_t i = 0; i < stored.size(); ++i) {
    const unsigned char presented_byte = i < presented.size() ? presented[i] : 0;
    difference |=
        static_cast<unsigned char>(presented_byte ^ static_cast<unsigned char>(stored[i]));
  }
  return difference == 0 ? 1u : 0u;
}

[[nodiscard]] absl::Status CheckToken(absl::string_view token) {
  if (token.size() < kMinTokenLength) {
    return absl::InvalidArgumentError(absl::StrCat(
        "token is ", token.size(), " characters; at least ", kMinTokenLength, " are required"));
  }
  for (char c : token) {
    if (c <= ' ' || c == 0x7f) {
      return absl::InvalidArgumentError("token holds whitespace or control characters");
    }
  }
  return absl::OkStatus();
}

[[nodiscard]] absl::Status ReadRandom(void* buffer, size_t size) {
  const int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::UnavailableError(absl::StrCat("open /dev/urandom: ", ErrnoText()));
  size_t done = 0;
  while (done < size) {
    const ssize_t n = read(fd, static_cast<char*>(buffer) + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string error = n < 0 ? ErrnoText() : "end of file";
      close(fd);
      return absl::UnavailableError(absl::StrCat("read /dev/urandom: ", error));
    }
    done += static_cast<size_t>(n);
  }
  close(fd);
  return absl::OkStatus();
}

}  // namespace

absl::string_view RoleName(Role role) {
  // Indexed by Role.
  constexpr absl::string_view kNames[] = {"user", "builder", "agent", "tuner", "admin"};
  const size_t index = static_cast<size_t>(role);
  return index < std::size(kNames) ? kNames[index] : "unknown";
}

[[nodiscard]] absl::StatusOr<Role> ParseRole(absl::string_view name) {
  for (Role role : kAllRoles) {
    if (name == RoleName(role)) return role;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown role '", name, "' (expected user, builder, agent, tuner or admin)"));
}

bool Allowed(Role role, Action action) {
  switch (role) {
    case Role::kAdmin:
      return true;
    case Role::kUser:
      return action == Action::kSubmit || action == Action::kQuery || action == Action::kCancel;
    case Role::kBuilder:
      return action == Action::kRegisterBuilder;
    case Role::kAgent:
      return action == Action::kRegisterAgent;
    case Role::kTuner:
      return action == Action::kRegisterTuner;
  }
  return false;
}

absl::StatusOr<TokenSet> TokenSet::Generate() {
  TokenSet tokens;
  for (Role role : kAllRoles) {
    unsigned char bytes[kGeneratedTokenBytes];
    TF_RETURN_IF_ERROR(ReadRandom(bytes, sizeof(bytes)));
    TF_RETURN_IF_ERROR(tokens.Add(role, absl::BytesToHexString(absl::string_view(
                                            reinterpret_cast<const char*>(bytes), sizeof(bytes)))));
  }
  return tokens;
}

absl::Status TokenSet::Add(Role role, std::string token) {
  TF_RETURN_IF_ERROR(CheckToken(token));
  for (const Entry& entry : entries_) {
    if (ConstantTimeEquals(token, entry.token)) {
      return absl::InvalidArgumentError(
          absl::StrCat("the same token is already given to role ", RoleName(entry.role)));
    }
  }
  entries_.push_back(Entry{role, std::move(token)});
  return absl::OkStatus();
}

absl::StatusOr<Role> TokenSet::Authenticate(absl::string_view authorization_header) const {
  absl::string_view header = absl::StripAsciiWhitespace(authorization_header);
  if (header.empty()) {
    return absl::UnauthenticatedError(absl::StrCat("no credentials: send metadata '",
                                                   kAuthorizationMetadataKey, ": Bearer <token>'"));
  }
  constexpr absl::string_view kScheme = "bearer ";
  if (header.size() <= kScheme.size() || !absl::StartsWithIgnoreCase(header, kScheme)) {
    return absl::UnauthenticatedError(absl::StrCat(
        "the ", kAuthorizationMetadataKey, " metadata is not of the form 'Bearer <token>'"));
  }
  const absl::string_view token = absl::StripLeadingAsciiWhitespace(header.substr(kScheme.size()));
  // Look at every entry, without stopping at a match, so the time taken does
  // not say which entry (or whether an early one) matched.
  int64_t match = -1;
  for (size_t i = 0; i < entries_.size(); ++i) {
    const int64_t mask = -static_cast<int64_t>(ConstantTimeEquals(token, entries_[i].token));
    match = (static_cast<int64_t>(i) & mask) | (match & ~mask);
  }
  if (match < 0) return absl::UnauthenticatedError("the bearer token is not recognized");
  return entries_[static_cast<size_t>(match)].role;
}

std::string TokenSet::TokenFor(Role role) const {
  for (const Entry& entry : entries_) {
    if (entry.role == role) return entry.token;
  }
  return "";
}

absl::Status TokenSet::WriteTokenFile(const std::string& path) const {
  std::string text =
      "# TuneFleet tokens: <role> <token> per line (roles user, builder, agent, tuner, admin).\n"
      "# Keep this file private (chmod 600).\n";
  for (const Entry& entry : entries_)
    absl::StrAppend(&text, RoleName(entry.role), " ", entry.token, "\n");

  // Never readable by others, whatever the umask; never seen half written.
  return ReplaceFileAtomically(path, text, 0600);
}

absl::Status TokenSet::WriteRoleTokenFiles(const std::string& dir) const {
  for (Role role : {Role::kUser, Role::kBuilder, Role::kAgent, Role::kTuner}) {
    const std::string token = TokenFor(role);
    if (token.empty()) continue;
    TF_RETURN_IF_ERROR(ReplaceFileAtomically(absl::StrCat(dir, "/", RoleName(role), ".token"),
                                             token + "\n", 0600));
  }
  return absl::OkStatus();
}

[[nodiscard]] absl::StatusOr<TokenSet> LoadTokenFile(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const absl::StatusCode code = errno == ENOENT   ? absl::StatusCode::kNotFound
                                  : errno == EACCES ? absl::StatusCode::kPermissionDenied
                                                    : absl::StatusCode::kUnavailable;
    return absl::Status(code, absl::StrCat("token file ", path, ": ", ErrnoText()));
  }
  // Check the file we opened, not the path (which could change between).
  struct stat info;
  if (fstat(fd, &info) != 0) {
    const std::string error = ErrnoText();
    close(fd);
    return absl::UnavailableError(absl::StrCat("token file ", path, ": stat: ", error));
  }
  if (!S_ISREG(info.st_mode)) {
    close(fd);
    return absl::FailedPreconditionError(
        absl::StrCat("token file ", path, " is not a regular file"));
  }
  if ((info.st_mode & (S_IROTH | S_IWOTH)) != 0) {
    close(fd);
    return absl::FailedPreconditionError(absl::StrCat(
        "token file ", path, " is ", (info.st_mode & S_IROTH) ? "readable" : "writable",
        " by other users; run: chmod 600 ", path));
  }
  std::string text;
  char buffer[4096];
  while (true) {
    const ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const std::string error = ErrnoText();
      close(fd);
      return absl::UnavailableError(absl::StrCat("token file ", path, ": read: ", error));
    }
    if (n == 0) break;
    text.append(buffer, static_cast<size_t>(n));
  }
  close(fd);

  TokenSet tokens;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == '#') continue;
    std::vector<absl::string_view> fields =
        absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    // A trailing comment ("agent <token> # board 3") is allowed.
    for (size_t i = 0; i < fields.size(); ++i) {
      if (!fields[i].empty() && fields[i][0] == '#') {
        fields.resize(i);
        break;
      }
    }
    const std::string where = absl::StrCat("token file ", path, " line ", line_number);
    if (fields.size() != 2) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": expected '<role> <token>', found ", fields.size(), " fields"));
    }
    absl::StatusOr<Role> role = ParseRole(fields[0]);
    if (!role.ok())
      return absl::InvalidArgumentError(absl::StrCat(where, ": ", role.status().message()));
    if (absl::Status added = tokens.Add(*role, std::string(fields[1])); !added.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": role ", fields[0], ": ", added.message()));
    }
  }
  if (tokens.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("token file ", path, " holds no tokens; expected lines '<role> <token>'"));
  }
  return tokens;
}

std::string BearerHeader(absl::string_view token) { return absl::StrCat("Bearer ", token); }

[[nodiscard]] absl::StatusOr<Role> AuthenticateContext(const TokenSet* tokens,
                                                       const grpc::ServerContextBase& context) {
  if (tokens == nullptr) return Role::kAdmin;
  const auto& metadata = context.client_metadata();
  const auto [first, last] = metadata.equal_range(kAuthorizationMetadataKey);
  if (first == last) return tokens->Authenticate("");
  if (std::next(first) != last) {
    return absl::UnauthenticatedError(absl::StrCat("more than one ", kAuthorizationMetadataKey,
                                                   " metadata entry; send exactly one"));
  }
  return tokens->Authenticate(absl::string_view(first->second.data(), first->second.size()));
}

}  // namespace tunefleet
