#include "rpc/plaintext_policy.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace tunefleet {

bool IsLoopbackAddress(const std::string& address) {
  std::string host = address;
  if (absl::StartsWith(host, "[")) {
    host = host.substr(1, host.find(']') - 1);
  } else if (size_t colon = host.rfind(':'); colon != std::string::npos) {
    host = host.substr(0, colon);
  }
  // An address literal, never a name that merely starts like one: a host
  // name such as "127.attacker.example" resolves wherever its owner likes.
  in_addr v4;
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6;
  if (inet_pton(AF_INET6, host.c_str(), &v6) == 1) return IN6_IS_ADDR_LOOPBACK(&v6);
  return host == "localhost";
}

[[nodiscard]] absl::Status CheckPlaintextAllowed(const std::string& addresses, bool insecure,
                                                 const std::string& tls_flag) {
  if (insecure) return absl::OkStatus();
  for (absl::string_view one : absl::StrSplit(addresses, ',', absl::SkipWhitespace())) {
    const std::string address(absl::StripAsciiWhitespace(one));
    if (IsLoopbackAddress(address)) continue;
    return absl::FailedPreconditionError(absl::StrCat(
        "refusing plaintext to ", address,
        ", which is not a loopback address: its token and everything it is sent could be read "
        "and forged on the way. Pass ",
        tls_flag, " (the tracker's CA), or --insecure to accept that"));
  }
  return absl::OkStatus();
}

}  // namespace tunefleet
