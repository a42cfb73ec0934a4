#include "local/local_mode_test_util.h"

#include <cstdio>
#include <cstdlib>

namespace tunefleet {

bool UseTestRunner() {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  if (srcdir == nullptr) return false;
  return setenv("TUNEFLEET_RUNNER",
                (std::string(srcdir) + "/tunefleet/kernel_runtime/tunefleet_runner").c_str(),
                1) == 0;
}

std::string FreshTestLog() {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string log = std::string(tmp != nullptr ? tmp : "/tmp") + "/" +
                          ::testing::UnitTest::GetInstance()->current_test_info()->name() +
                          ".jsonl";
  std::remove(log.c_str());
  return log;
}

void MakeQuick(proto::JobSpec& spec, uint64_t seed) {
  spec.set_tuner("random");
  spec.set_seed(seed);
  spec.mutable_measure()->set_number(2);
  spec.mutable_measure()->set_repeat(2);
  spec.mutable_measure()->set_cooldown_interval_s(0);
  spec.set_validate_top_k(2);
  spec.set_validation_passes(2);
}

}  // namespace tunefleet
