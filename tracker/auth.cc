#include "tracker/auth.h"

#include <errno.h>
#include <fcntl.h>
#include <grpc/grpc_security_constants.h>
#include <grpcpp/security/auth_context.h>
#include <grpcpp/server_context.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "common/file_util.h"
#include "common/sha256.h"
#include "common/signing.h"
#include "common/status_macros.h"

namespace tunefleet {
namespace {

constexpr Role kAllRoles[] = {Role::kUser, Role::kBuilder, Role::kAgent, Role::kTuner,
                              Role::kAdmin};
constexpr size_t kGeneratedTokenBytes = 32;
constexpr size_t kGeneratedIdBytes = 8;
constexpr absl::string_view kGeneratedPrefix = "tf_";
constexpr absl::string_view kHashPrefix = "$argon2id$";
// Refused tokens remembered (by SHA-256) so that a client retrying a wrong
// token costs one hash, not one Argon2 run, each time; cleared when full.
constexpr size_t kMaxRememberedRefusals = 4096;

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

// The id of a generated token "tf_<16 hex>_<secret>", or "".
std::string TokenId(absl::string_view token) {
  if (!absl::StartsWith(token, kGeneratedPrefix)) return "";
  const absl::string_view rest = token.substr(kGeneratedPrefix.size());
  const size_t underscore = rest.find('_');
  if (underscore != 2 * kGeneratedIdBytes) return "";
  const absl::string_view id = rest.substr(0, underscore);
  for (char c : id) {
    if (!absl::ascii_isxdigit(c)) return "";
  }
  return std::string(id);
}

[[nodiscard]] absl::StatusOr<std::string> HashToken(absl::string_view token) {
  TF_RETURN_IF_ERROR(InitSodium());
  char hash[crypto_pwhash_STRBYTES];
  if (crypto_pwhash_str(hash, token.data(), token.size(), crypto_pwhash_OPSLIMIT_INTERACTIVE,
                        crypto_pwhash_MEMLIMIT_INTERACTIVE) != 0) {
    return absl::ResourceExhaustedError("hashing a token ran out of memory (Argon2id, 64 MiB)");
  }
  return std::string(hash);
}

bool HashMatches(const std::string& hash, absl::string_view token) {
  return crypto_pwhash_str_verify(hash.c_str(), token.data(), token.size()) == 0;
}

[[nodiscard]] absl::StatusOr<std::string> RandomHex(size_t bytes) {
  std::string raw(bytes, '\0');
  TF_RETURN_IF_ERROR(ReadRandom(raw.data(), raw.size()));
  return absl::BytesToHexString(raw);
}

std::string ScopeAttributes(const std::string& id, const TokenScope& scope) {
  std::string text;
  if (!id.empty()) absl::StrAppend(&text, " id=", id);
  if (!scope.device_keys.empty())
    absl::StrAppend(&text, " keys=", absl::StrJoin(scope.device_keys, ","));
  if (!scope.identity.empty()) absl::StrAppend(&text, " identity=", scope.identity);
  const UserQuota& q = scope.quota;
  if (q.max_jobs_in_flight > 0) absl::StrAppend(&text, " jobs=", q.max_jobs_in_flight);
  if (q.max_trials_per_hour > 0) absl::StrAppend(&text, " trials_per_hour=", q.max_trials_per_hour);
  if (q.max_agent_share > 0) absl::StrAppend(&text, " agent_share=", q.max_agent_share);
  return text;
}

[[nodiscard]] absl::Status CheckScope(const TokenScope& scope) {
  for (const std::string& key : scope.device_keys) {
    if (key.empty() || key.find_first_of(", \t#=") != std::string::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("device key '", key, "' is empty or holds ',', '=', '#' or whitespace"));
    }
  }
  if (scope.identity.find_first_of(" \t#") != std::string::npos) {
    return absl::InvalidArgumentError("identity holds whitespace or '#'");
  }
  const UserQuota& q = scope.quota;
  if (q.max_jobs_in_flight < 0 || q.max_trials_per_hour < 0 ||
      !(q.max_agent_share >= 0 && q.max_agent_share <= 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("quota out of range: jobs=", q.max_jobs_in_flight,
                     " trials_per_hour=", q.max_trials_per_hour, " agent_share=", q.max_agent_share,
                     " (counts >= 1, a share in (0, 1])"));
  }
  return absl::OkStatus();
}

// A quota attribute's value: a count >= 1, or a share in (0, 1].
[[nodiscard]] absl::Status ParseQuota(absl::string_view name, absl::string_view value,
                                      UserQuota& quota) {
  if (name == "agent_share") {
    double share = 0;
    if (absl::SimpleAtod(value, &share) && share > 0 && share <= 1) {
      quota.max_agent_share = share;
      return absl::OkStatus();
    }
    return absl::InvalidArgumentError(
        absl::StrCat("agent_share=", value, " is not a share in (0, 1]"));
  }
  int64_t count = 0;
  if (!absl::SimpleAtoi(value, &count) || count < 1 ||
      (name == "jobs" && count > std::numeric_limits<int32_t>::max())) {
    return absl::InvalidArgumentError(absl::StrCat(name, "=", value, " is not a count >= 1"));
  }
  if (name == "jobs") {
    quota.max_jobs_in_flight = static_cast<int32_t>(count);
  } else {
    quota.max_trials_per_hour = count;
  }
  return absl::OkStatus();
}

}  // namespace

// A token bucket of failed checks: `burst` at once, `per_second` after.
struct Bucket {
  double tokens = 0;
  double last_s = -1;
  // Refills to now; whether a failure may still be afforded.
  bool Available(double now_s, double burst, double per_second) {
    tokens = last_s < 0 ? burst : std::min(burst, tokens + (now_s - last_s) * per_second);
    last_s = now_s;
    return tokens >= 1;
  }
  void Spend() { tokens = std::max(0.0, tokens - 1); }
};

constexpr size_t kMaxRationedPeers = 4096;

struct TokenSet::Cache {
  absl::Mutex mu;
  // SHA-256 of a verified token -> its entry.
  absl::flat_hash_map<std::string, size_t> verified ABSL_GUARDED_BY(mu);
  absl::flat_hash_set<std::string> refused ABSL_GUARDED_BY(mu);
  // Argon2 checks left, per peer host and for everyone.
  absl::flat_hash_map<std::string, Bucket> per_peer ABSL_GUARDED_BY(mu);
  Bucket everyone ABSL_GUARDED_BY(mu);
};

namespace {
// "ipv4:10.0.0.5:51234" -> "ipv4:10.0.0.5": a peer's port changes with every
// connection, its host does not.
std::string PeerHost(absl::string_view peer) {
  const size_t colon = peer.rfind(':');
  const size_t first = peer.find(':');
  return std::string(colon != absl::string_view::npos && colon != first ? peer.substr(0, colon)
                                                                        : peer);
}
}  // namespace

[[nodiscard]] absl::Status Principal::CheckDeviceKey(absl::string_view device_key) const {
  if (scope.device_keys.empty()) return absl::OkStatus();
  for (const std::string& key : scope.device_keys) {
    if (key == device_key) return absl::OkStatus();
  }
  return absl::PermissionDeniedError(absl::StrCat(
      "this agent token is scoped to device key", scope.device_keys.size() > 1 ? "s " : " ",
      absl::StrJoin(scope.device_keys, ", "), "; it cannot register as '", device_key, "'"));
}

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

TokenSet::TokenSet() : cache_(std::make_unique<Cache>()) {}
TokenSet::TokenSet(TokenSet&&) noexcept = default;
TokenSet& TokenSet::operator=(TokenSet&&) noexcept = default;
TokenSet::~TokenSet() = default;

[[nodiscard]] absl::StatusOr<TokenSet> TokenSet::Generate() {
  TokenSet tokens;
  for (Role role : kAllRoles) TF_RETURN_IF_ERROR(tokens.AddGenerated(role).status());
  return tokens;
}

[[nodiscard]] absl::StatusOr<std::string> TokenSet::AddGenerated(Role role, TokenScope scope) {
  TF_ASSIGN_OR_RETURN(const std::string id, RandomHex(kGeneratedIdBytes));
  TF_ASSIGN_OR_RETURN(const std::string secret, RandomHex(kGeneratedTokenBytes));
  std::string token = absl::StrCat(kGeneratedPrefix, id, "_", secret);
  TF_RETURN_IF_ERROR(Add(role, token, std::move(scope)));
  return token;
}

[[nodiscard]] absl::Status TokenSet::Add(Role role, std::string token, TokenScope scope) {
  TF_RETURN_IF_ERROR(CheckToken(token));
  TF_RETURN_IF_ERROR(CheckScope(scope));
  for (const Entry& entry : entries_) {
    if (!entry.plaintext.empty() && ConstantTimeEquals(token, entry.plaintext)) {
      return absl::InvalidArgumentError(
          absl::StrCat("the same token is already given to role ", RoleName(entry.role)));
    }
  }
  TF_ASSIGN_OR_RETURN(std::string hash, HashToken(token));
  std::string id = TokenId(token);
  return AddEntry(Entry{role, std::move(hash), std::move(id), std::move(scope), std::move(token)});
}

[[nodiscard]] absl::Status TokenSet::AddEntry(Entry entry) {
  if (!entry.id.empty()) {
    for (const Entry& other : entries_) {
      if (other.id == entry.id) {
        return absl::InvalidArgumentError(absl::StrCat(
            "token id ", entry.id, " is already given to role ", RoleName(other.role)));
      }
    }
  }
  entries_.push_back(std::move(entry));
  return absl::OkStatus();
}

Principal TokenSet::PrincipalOf(const Entry& entry) {
  return Principal{.role = entry.role,
                   .scope = entry.scope,
                   .user = entry.id.empty()
                               ? absl::StrCat("token:", Sha256Hex(entry.hash).substr(0, 16))
                               : absl::StrCat("tf_", entry.id)};
}

[[nodiscard]] absl::StatusOr<Principal> TokenSet::Authenticate(
    absl::string_view authorization_header, absl::string_view peer) const {
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
  const absl::Status unknown = absl::UnauthenticatedError("the bearer token is not recognized");
  if (CheckToken(token).ok() == false) return unknown;

  const std::string digest = Sha256Hex(token);
  {
    absl::MutexLock lock(&cache_->mu);
    if (auto it = cache_->verified.find(digest); it != cache_->verified.end()) {
      return PrincipalOf(entries_[it->second]);
    }
    if (cache_->refused.contains(digest)) return unknown;
  }
  // Argon2 outside the lock: only the entries this token can match (its id's
  // line, or the lines without an id for tokens of other shapes).
  const std::string id = TokenId(token);
  const bool hashes = std::any_of(entries_.begin(), entries_.end(),
                                  [&](const Entry& entry) { return entry.id == id; });
  const std::string host = PeerHost(peer);
  if (hashes) {
    const double now_s = (clock_ != nullptr ? *clock_ : SystemClock()).NowSeconds();
    absl::MutexLock lock(&cache_->mu);
    if (!cache_->per_peer.contains(host) && cache_->per_peer.size() >= kMaxRationedPeers) {
      cache_->per_peer.clear();
    }
    // Both evaluated: each refills to now.
    const bool peer_may =
        cache_->per_peer[host].Available(now_s, kArgon2PerPeerBurst, kArgon2PerPeerPerSecond);
    const bool anyone_may = cache_->everyone.Available(now_s, kArgon2Burst, kArgon2PerSecond);
    if (!peer_may || !anyone_may) {
      return absl::ResourceExhaustedError(absl::StrCat("too many unrecognized tokens",
                                                       host.empty() ? "" : " from ", host,
                                                       "; wait a second and retry"));
    }
  }
  std::optional<size_t> match;
  for (size_t i = 0; i < entries_.size() && !match.has_value(); ++i) {
    if (entries_[i].id == id && HashMatches(entries_[i].hash, token)) match = i;
  }
  absl::MutexLock lock(&cache_->mu);
  if (!match.has_value()) {
    if (hashes) {  // the failed checks are what is rationed
      cache_->per_peer[host].Spend();
      cache_->everyone.Spend();
    }
    if (cache_->refused.size() >= kMaxRememberedRefusals) cache_->refused.clear();
    cache_->refused.insert(digest);
    return unknown;
  }
  cache_->verified.emplace(digest, *match);
  return PrincipalOf(entries_[*match]);
}

std::string TokenSet::TokenFor(Role role) const {
  for (const Entry& entry : entries_) {
    if (entry.role == role && !entry.plaintext.empty()) return entry.plaintext;
  }
  return "";
}

std::vector<int> TokenSet::UnboundEntries() const {
  std::vector<int> unbound;
  for (size_t i = 0; i < entries_.size(); ++i) {
    if (entries_[i].scope.identity.empty()) unbound.push_back(static_cast<int>(i) + 1);
  }
  return unbound;
}

[[nodiscard]] absl::Status TokenSet::WriteTokenFile(const std::string& path) const {
  std::string text =
      "# TuneFleet tokens (hashes only): <role> <argon2id hash> [id=] [keys=] [identity=].\n"
      "# Keep this file private (chmod 600).\n";
  for (const Entry& entry : entries_) {
    absl::StrAppend(&text, RoleName(entry.role), " ", entry.hash,
                    ScopeAttributes(entry.id, entry.scope), "\n");
  }
  // Never readable by others, whatever the umask; never seen half written.
  return ReplaceFileAtomically(path, text, 0600);
}

[[nodiscard]] absl::StatusOr<std::string> TokenFileLine(Role role, absl::string_view token,
                                                        const TokenScope& scope) {
  TF_RETURN_IF_ERROR(CheckToken(token));
  TF_RETURN_IF_ERROR(CheckScope(scope));
  TF_ASSIGN_OR_RETURN(std::string hash, HashToken(token));
  return absl::StrCat(RoleName(role), " ", hash, ScopeAttributes(TokenId(token), scope));
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
  // Group access counts as others': the file says who may run jobs and
  // register as workers.
  absl::StatusOr<std::string> text = ReadPrivateFileToString(path, kMaxTokenFileBytes);
  if (!text.ok()) {
    return absl::Status(text.status().code(),
                        absl::StrCat("token file: ", text.status().message()));
  }

  TokenSet tokens;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(*text, '\n')) {
    ++line_number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == '#') continue;
    std::vector<absl::string_view> fields =
        absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    // A trailing comment ("agent <hash> # board 3") is allowed.
    for (size_t i = 0; i < fields.size(); ++i) {
      if (!fields[i].empty() && fields[i][0] == '#') {
        fields.resize(i);
        break;
      }
    }
    const std::string where = absl::StrCat("token file ", path, " line ", line_number);
    if (fields.size() < 2) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": expected '<role> <hash> [id=..] [keys=..] [identity=..]', found ",
                       fields.size(), " field", fields.size() == 1 ? "" : "s"));
    }
    absl::StatusOr<Role> role = ParseRole(fields[0]);
    if (!role.ok())
      return absl::InvalidArgumentError(absl::StrCat(where, ": ", role.status().message()));
    if (!absl::StartsWith(fields[1], kHashPrefix)) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, ": role ", fields[0],
          ": the credential is not an Argon2id hash; the tracker stores tokens hashed only. "
          "Replace the line with what `tunefleet token hash --role ",
          fields[0], "` prints for that token (it reads the token on stdin)"));
    }
    TokenSet::Entry entry{*role, std::string(fields[1]), "", TokenScope{}, ""};
    for (size_t i = 2; i < fields.size(); ++i) {
      const size_t equals = fields[i].find('=');
      const absl::string_view name = fields[i].substr(0, equals);
      const absl::string_view value =
          equals == absl::string_view::npos ? "" : fields[i].substr(equals + 1);
      if (name == "id" && !value.empty()) {
        entry.id = std::string(value);
      } else if (name == "keys" && !value.empty()) {
        entry.scope.device_keys = absl::StrSplit(value, ',', absl::SkipEmpty());
      } else if (name == "identity" && !value.empty()) {
        entry.scope.identity = std::string(value);
      } else if (name == "jobs" || name == "trials_per_hour" || name == "agent_share") {
        if (absl::Status parsed = ParseQuota(name, value, entry.scope.quota); !parsed.ok()) {
          return absl::InvalidArgumentError(absl::StrCat(where, ": ", parsed.message()));
        }
      } else {
        return absl::InvalidArgumentError(
            absl::StrCat(where, ": unknown attribute '", name,
                         "' (expected id=<hex>, keys=<key>[,<key>], identity=<URI>, jobs=<n>, "
                         "trials_per_hour=<n> or agent_share=<fraction>)"));
      }
    }
    if (!entry.scope.quota.unlimited() && *role != Role::kUser && *role != Role::kAdmin) {
      return absl::InvalidArgumentError(
          absl::StrCat(where,
                       ": a quota (jobs=, trials_per_hour=, agent_share=) is for user "
                       "and admin tokens, not ",
                       fields[0]));
    }
    if (!entry.scope.device_keys.empty() && *role != Role::kAgent) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": keys= scopes agent tokens only, not ", fields[0]));
    }
    if (absl::Status scope = CheckScope(entry.scope); !scope.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": ", scope.message()));
    }
    if (absl::Status added = tokens.AddEntry(std::move(entry)); !added.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": ", added.message()));
    }
  }
  if (tokens.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("token file ", path, " holds no tokens; expected lines '<role> <hash>'"));
  }
  return tokens;
}

std::string BearerHeader(absl::string_view token) { return absl::StrCat("Bearer ", token); }

CallCredentials CredentialsOf(const grpc::ServerContextBase& context) {
  CallCredentials call;
  const auto& metadata = context.client_metadata();
  const auto [first, last] = metadata.equal_range(kAuthorizationMetadataKey);
  for (auto it = first; it != last; ++it) {
    call.authorization.emplace_back(it->second.data(), it->second.size());
  }
  call.peer = context.peer();
  if (const std::shared_ptr<const grpc::AuthContext> auth = context.auth_context();
      auth != nullptr) {
    // The URI SANs only (gRPC's "peer_uri"), as documented: a DNS or IP
    // name that happens to spell the identity does not count.
    for (const grpc::string_ref& value : auth->FindPropertyValues(GRPC_PEER_URI_PROPERTY_NAME)) {
      std::string text(value.data(), value.size());
      if (std::find(call.uri_sans.begin(), call.uri_sans.end(), text) == call.uri_sans.end())
        call.uri_sans.push_back(std::move(text));
    }
  }
  return call;
}

[[nodiscard]] absl::StatusOr<Principal> AuthenticateCredentials(const TokenSet* tokens,
                                                                const CallCredentials& call) {
  if (tokens == nullptr) return Principal{Role::kAdmin, TokenScope{}};
  if (call.authorization.empty()) return tokens->Authenticate("");
  if (call.authorization.size() > 1) {
    return absl::UnauthenticatedError(absl::StrCat("more than one ", kAuthorizationMetadataKey,
                                                   " metadata entry; send exactly one"));
  }
  TF_ASSIGN_OR_RETURN(Principal principal, tokens->Authenticate(call.authorization[0], call.peer));
  if (principal.scope.identity.empty()) return principal;
  // A bound token is worth nothing without the certificate it is bound to.
  for (const std::string& san : call.uri_sans) {
    if (san == principal.scope.identity) return principal;
  }
  return absl::PermissionDeniedError(absl::StrCat(
      "this token is bound to the client certificate identity ", principal.scope.identity,
      call.uri_sans.empty() ? ", and the call presented no client certificate"
                            : absl::StrCat(", and the certificate's names are ",
                                           absl::StrJoin(call.uri_sans, ", "))));
}

[[nodiscard]] absl::StatusOr<Principal> AuthenticateContext(
    const TokenSet* tokens, const grpc::ServerContextBase& context) {
  return AuthenticateCredentials(tokens, CredentialsOf(context));
}

}  // namespace tunefleet
