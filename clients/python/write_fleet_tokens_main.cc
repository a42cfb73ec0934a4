// write_fleet_tokens: a fresh token set for a test fleet, written as
// `tunefleet up` writes it (launcher/fleet_launcher.cc): <dir>/tokens, the
// tracker's --token_file, and <dir>/<role>.token (user, builder, agent,
// tuner) holding each role's token, all 0600. For //clients/python:fleet_test,
// which starts the daemons itself and so need not know how the tracker
// stores tokens (tracker/auth.h).
//
//   write_fleet_tokens /tmp/fleet
#include <iostream>
#include <string>

#include "tracker/auth.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: write_fleet_tokens <dir>\n";
    return 2;
  }
  const std::string dir = argv[1];
  absl::StatusOr<tunefleet::TokenSet> tokens = tunefleet::TokenSet::Generate();
  absl::Status written = tokens.ok() ? tokens->WriteTokenFile(dir + "/tokens") : tokens.status();
  if (written.ok()) written = tokens->WriteRoleTokenFiles(dir);
  if (!written.ok()) {
    std::cerr << "write_fleet_tokens: " << written << "\n";
    return 1;
  }
  return 0;
}
