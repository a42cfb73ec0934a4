// An AArch64 board on this x86 machine: the cross-built agent
// (//device_agent/aarch64:agent) runs under qemu-aarch64, starts its
// AArch64 runner the same way (--runner_launcher), registers as key
// "rk3399" with an x86 tracker on loopback, and measures what an x86
// builder cross-compiles for the RK3399's big cores (cortex-a72): a small
// dense and a small conv2d are tuned to completion, and every kernel that
// reached the board passed the output check against the reference computed
// on the (emulated) board. Emulated timings mean nothing; correctness and
// the protocol are what this checks.
//
// Needs qemu-user and the cross toolchain with the arm64 libraries
// (scripts/install_deps.sh); without them it fails, saying what is missing.
#include <elf.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "launcher/fleet_launcher.h"
#include "tuner_core/measure/measure.h"
#include "tuner_core/records/record.h"

namespace tunefleet {
namespace {

constexpr char kBoardKey[] = "rk3399";
constexpr char kBigCoreTarget[] = "llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72";
constexpr char kInstallHint[] =
    "run scripts/install_deps.sh (qemu-user, g++-aarch64-linux-gnu, arm64 libraries)";

// qemu-aarch64 in $PATH or /usr/bin; empty when absent.
std::string FindQemu() {
  std::vector<std::string> dirs = {"/usr/bin"};
  if (const char* path = std::getenv("PATH"); path != nullptr) {
    for (absl::string_view dir : absl::StrSplit(path, ':', absl::SkipEmpty()))
      dirs.emplace_back(dir);
  }
  for (const std::string& dir : dirs) {
    const std::string candidate = dir + "/qemu-aarch64";
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

// The ELF machine of `path`, or 0 when it is not a readable 64-bit ELF.
uint16_t ElfMachine(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  Elf64_Ehdr header;
  if (!in.read(reinterpret_cast<char*>(&header), sizeof(header))) return 0;
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS64)
    return 0;
  return header.e_machine;
}

std::vector<Record> Records(FleetLauncher& fleet, const std::string& job_id) {
  std::vector<Record> out;
  absl::StatusOr<std::vector<std::string>> lines = fleet.client().Export(job_id);
  EXPECT_TRUE(lines.ok()) << lines.status();
  if (!lines.ok()) return out;
  for (const std::string& line : *lines) {
    absl::StatusOr<Record> record = Record::FromLine(line);
    EXPECT_TRUE(record.ok()) << record.status() << " in " << line;
    if (record.ok()) out.push_back(*std::move(record));
  }
  return out;
}

// Every trial either ran on the board and passed (error_no 0, costs > 0) or
// was refused by the builder because its register tile cannot fit NEON's 32
// q registers (tuner_core/templates/register_fit.h: the templates' 4-, 8- and
// 16-lane f32 configs build for NEON, wider vectors as 2 or 4 registers, as
// long as the tile fits; dense_gemm.x86's dot kernel checks its own tile);
// nothing else fails.
void ExpectAllMeasuredTrialsCorrect(const std::vector<Record>& records, int64_t n_trial,
                                    int min_measured) {
  EXPECT_EQ(static_cast<int64_t>(records.size()), n_trial);
  int measured = 0;
  for (const Record& record : records) {
    EXPECT_EQ(record.target, kBigCoreTarget);
    if (record.result.error_no == MeasureErrorNo::kInstantiationError &&
        ((absl::StrContains(record.result.error_msg, "register tile needs") &&
          absl::StrContains(record.result.error_msg, "has 32")) ||
         absl::StrContains(record.result.error_msg, "needs more than 32 vector registers"))) {
      continue;  // refused before codegen: the tile would spill on NEON
    }
    EXPECT_EQ(record.result.error_no, MeasureErrorNo::kNoError)
        << MeasureErrorName(record.result.error_no) << ": " << record.result.error_msg
        << "\nconfig " << record.config.dump();
    if (record.result.error_no != MeasureErrorNo::kNoError) continue;
    ++measured;
    ASSERT_FALSE(record.result.costs.empty());
    for (double cost : record.result.costs) EXPECT_GT(cost, 0.0);
  }
  EXPECT_GE(measured, min_measured) << "too few trials reached the board";
  std::printf(
      "%s: %zu trials, %d measured correct on the emulated board, %zu refused by the builder\n",
      records.empty() ? "?" : records.front().workload_name.c_str(), records.size(), measured,
      records.size() - measured);
}

class Aarch64AgentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    qemu_ = FindQemu();
    ASSERT_FALSE(qemu_.empty()) << "qemu-aarch64 not found in $PATH or /usr/bin: " << kInstallHint;
    const char* srcdir = std::getenv("TEST_SRCDIR");
    ASSERT_NE(srcdir, nullptr) << "run under bazel test";
    for (const char* name : {"tunefleet_agent", "tunefleet_runner"}) {
      const std::string path = absl::StrCat(srcdir, "/tunefleet/device_agent/aarch64/", name);
      ASSERT_EQ(access(path.c_str(), X_OK), 0)
          << path << " is missing: build //device_agent/aarch64:agent; " << kInstallHint;
      ASSERT_EQ(ElfMachine(path), EM_AARCH64) << path << " is not an AArch64 executable";
    }
    agent_ = absl::StrCat(srcdir, "/tunefleet/device_agent/aarch64/tunefleet_agent");
  }

  FleetLauncher::Options BoardFleet() const {
    FleetLauncher::Options options;
    options.device_key = kBoardKey;
    options.target = kBigCoreTarget;
    options.agent_binary = agent_;
    // -L /: the arm64 loader and libraries of Debian multiarch.
    options.agent_command_prefix = {qemu_, "-L", "/"};
    options.agent_runner_launcher = absl::StrCat(qemu_, " -L /");
    options.agent_threads = 2;
    return options;
  }

  // Emulated kernels are slow: generous per-run timeouts, few repeats.
  static void ForEmulation(proto::JobSpec& spec) {
    spec.mutable_measure()->set_timeout_s(30);
    spec.mutable_measure()->set_number(1);
    spec.mutable_measure()->set_repeat(2);
    spec.set_seed(7);
  }

  std::string qemu_;
  std::string agent_;
};

TEST_F(Aarch64AgentTest, EmulatedRk3399AgentTunesDenseAndConv2dCorrectly) {
  FleetLauncher fleet(BoardFleet());
  const absl::Status started = fleet.Start();
  ASSERT_TRUE(started.ok()) << started << "\nagent log:\n" << fleet.Log("agent-0");

  // The board registered as what it is.
  absl::StatusOr<proto::ListDevicesResponse> devices = fleet.client().Devices();
  ASSERT_TRUE(devices.ok()) << devices.status();
  int agents = 0;
  for (const proto::WorkerStatus& worker : devices->workers()) {
    if (worker.role() != proto::AGENT) continue;
    ++agents;
    EXPECT_EQ(worker.device_key(), kBoardKey);
    EXPECT_EQ(worker.device().arch(), "aarch64") << worker.device().DebugString();
  }
  EXPECT_EQ(agents, 1);

  constexpr int64_t kDenseTrials = 12;
  proto::JobSpec dense = fleet.DenseJob(kDenseTrials, "64,64,64");
  dense.set_name("rk3399-dense");
  ForEmulation(dense);

  constexpr int64_t kConvTrials = 10;
  proto::JobSpec conv = fleet.DenseJob(kConvTrials);
  conv.set_name("rk3399-conv2d");
  conv.mutable_task()->set_workload_name("conv2d_nchw");
  conv.mutable_task()->set_workload_args_json(
      R"({"N":1,"C":8,"H":14,"W":14,"K":16,"R":3,"S":3,"padding":1,"layout":"NCHWc"})");
  ForEmulation(conv);

  absl::StatusOr<proto::JobStatus> dense_job = fleet.client().Submit(dense);
  ASSERT_TRUE(dense_job.ok()) << dense_job.status();
  absl::StatusOr<proto::JobStatus> conv_job = fleet.client().Submit(conv);
  ASSERT_TRUE(conv_job.ok()) << conv_job.status();

  for (const auto& [job, n_trial] :
       {std::pair{*dense_job, kDenseTrials}, std::pair{*conv_job, kConvTrials}}) {
    absl::StatusOr<proto::JobStatus> done = fleet.WaitForJob(job.job_id(), 240);
    ASSERT_TRUE(done.ok()) << done.status() << "\nagent log:\n" << fleet.Log("agent-0");
    EXPECT_EQ(done->state(), proto::SUCCEEDED) << done->message();
    EXPECT_EQ(done->trials_done(), n_trial);
    EXPECT_GT(done->best_gflops(), 0) << job.spec().name();
    // Most trials reach the board (a few dense tiles cannot fit NEON's
    // registers and are refused by the builder).
    ExpectAllMeasuredTrialsCorrect(Records(fleet, job.job_id()), n_trial,
                                   /*min_measured=*/n_trial / 2);
  }

  // Every measurement was the emulated board's.
  devices = fleet.client().Devices();
  ASSERT_TRUE(devices.ok()) << devices.status();
  for (const proto::WorkerStatus& worker : devices->workers()) {
    if (worker.role() == proto::AGENT) {
      EXPECT_GT(worker.completed(), 0) << worker.name();
    }
  }
}

}  // namespace
}  // namespace tunefleet
