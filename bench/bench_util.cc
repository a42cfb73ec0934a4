#include "bench/bench_util.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>

namespace tunefleet {
namespace bench {

std::string ExeDir() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  buf[n > 0 ? n : 0] = 0;
  std::string exe(buf);
  return exe.substr(0, exe.rfind('/'));
}

std::string OpenBlasCoreTypeForThisCpu() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string text((std::istreambuf_iterator<char>(cpuinfo)), std::istreambuf_iterator<char>());
  if (text.find(" avx512f") != std::string::npos) return "SkylakeX";
  if (text.find(" avx2") != std::string::npos) return "Haswell";
  return "";
}

[[nodiscard]] absl::StatusOr<IsaChoice> ChooseIsa(const std::string& flag) {
  if (flag.empty()) return IsaChoice{"host", "", "", ""};
  if (flag != "avx2") {
    return absl::InvalidArgumentError("--isa: \"avx2\" or empty (the host's widest), not \"" +
                                      flag + "\"");
  }
  if (setenv("ONEDNN_MAX_CPU_ISA", "AVX2", /*overwrite=*/1) != 0) {
    return absl::InternalError("--isa avx2: cannot set ONEDNN_MAX_CPU_ISA");
  }
  return IsaChoice{"avx2", " -mattr=-avx512f", "Haswell", "avx2"};
}

nlohmann::json RunJsonCommand(const std::string& command) {
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return nlohmann::json{{"error", "popen failed"}};
  std::string out;
  char buf[512];
  while (fgets(buf, sizeof(buf), pipe)) out += buf;
  pclose(pipe);
  try {
    return nlohmann::json::parse(out);
  } catch (const nlohmann::json::exception&) {
    return nlohmann::json{{"error", out}};
  }
}

}  // namespace bench
}  // namespace tunefleet
