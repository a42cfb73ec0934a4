#include "metrics/metrics_testing.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "metrics/metrics_server.h"

namespace tunefleet {

[[nodiscard]] absl::StatusOr<std::string> HttpGetForTest(int port, const std::string& path) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return absl::UnavailableError("socket failed");
  timeval timeout{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    close(fd);
    return absl::UnavailableError(absl::StrCat("connect to 127.0.0.1:", port, " failed"));
  }
  const std::string request =
      absl::StrCat("GET ", path, " HTTP/1.0\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
  if (send(fd, request.data(), request.size(), 0) != static_cast<ssize_t>(request.size())) {
    close(fd);
    return absl::UnavailableError("send failed");
  }
  std::string response;
  char buffer[4096];
  ssize_t n;
  while ((n = recv(fd, buffer, sizeof(buffer), 0)) > 0) response.append(buffer, n);
  close(fd);
  return response;
}

[[nodiscard]] absl::StatusOr<std::string> ScrapeForTest(int port) {
  absl::StatusOr<std::string> response = HttpGetForTest(port, kMetricsPath);
  if (!response.ok()) return response.status();
  const size_t body = response->find("\r\n\r\n");
  if (!absl::StrContains(response->substr(0, response->find("\r\n")), " 200 ") ||
      body == std::string::npos) {
    return absl::UnavailableError(absl::StrCat("not a 200 response: ", response->substr(0, 200)));
  }
  return response->substr(body + 4);
}

bool PromtoolInstalled() { return access(kPromtoolPath, X_OK) == 0; }

[[nodiscard]] absl::Status PromtoolCheckMetrics(const std::string& exposition) {
  const char* tmpdir = std::getenv("TEST_TMPDIR");
  const std::string path =
      absl::StrCat(tmpdir != nullptr ? tmpdir : "/tmp", "/promtool-input-", getpid(), ".txt");
  {
    std::ofstream out(path);
    out << exposition;
    if (!out) return absl::UnavailableError(absl::StrCat("cannot write ", path));
  }
  const std::string command = absl::StrCat(kPromtoolPath, " check metrics < '", path, "' 2>&1");
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return absl::UnavailableError(absl::StrCat("cannot run ", command));
  std::string output;
  char buffer[1024];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) output.append(buffer, n);
  const int status = pclose(pipe);
  std::remove(path.c_str());
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !output.empty()) {
    return absl::FailedPreconditionError(absl::StrCat("promtool check metrics: ", output));
  }
  return absl::OkStatus();
}

}  // namespace tunefleet
