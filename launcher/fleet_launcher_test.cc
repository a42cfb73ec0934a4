// FleetLauncher's supervision on real processes: a tracker and a tuner are
// started, killed with kill -9, and Supervise (on a fake clock) reports and
// restarts them, then gives up on one that keeps dying.
#include "launcher/fleet_launcher.h"

#include <signal.h>

#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "common/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace {

using ::testing::HasSubstr;
using Kind = FleetLauncher::ChildEvent::Kind;

std::string Describe(const std::vector<FleetLauncher::ChildEvent>& events) {
  std::vector<std::string> lines;
  for (const auto& e : events) lines.push_back(e.ToString());
  return absl::StrJoin(lines, "\n");
}

FleetLauncher::Options TrackerAndTuner() {
  FleetLauncher::Options o;
  o.builders = 0;
  o.agents = 0;
  o.tuners = 1;
  o.restart = RestartOptions{
      .initial_backoff_s = 0.5, .max_backoff_s = 30, .max_restarts = 2, .stable_after_s = 60};
  return o;
}

// Kills `process` with `signal` and waits (bounded) until it is reaped.
void KillAndReap(Process& process, int signal) {
  process.Kill(signal);
  ASSERT_TRUE(process.Wait(30).has_value()) << "pid " << process.pid() << " did not die";
}

TEST(FleetLauncherSuperviseTest, RestartsAKilledChildAfterBackoffAndSaysWhyItDied) {
  FleetLauncher fleet(TrackerAndTuner());
  ASSERT_TRUE(fleet.Start().ok());
  FakeClock clock;
  EXPECT_TRUE(fleet.Supervise(clock).empty()) << "all children run";

  const pid_t old_pid = fleet.tuner(0).pid();
  KillAndReap(fleet.tuner(0), SIGKILL);
  std::vector<FleetLauncher::ChildEvent> events = fleet.Supervise(clock);
  ASSERT_EQ(events.size(), 1u) << Describe(events);
  EXPECT_EQ(events[0].kind, Kind::kDied);
  EXPECT_EQ(events[0].child, "tuner-0");
  EXPECT_THAT(events[0].ToString(), HasSubstr("tuner-0 killed by SIGKILL"));
  EXPECT_THAT(events[0].ToString(), HasSubstr("restarting it in 0.5 s (restart 1 of 2)"));
  EXPECT_THAT(events[0].ToString(), HasSubstr(fleet.dir() + "/tuner-0.log"));
  // Not before its backoff is over.
  EXPECT_TRUE(fleet.Supervise(clock).empty());
  EXPECT_FALSE(fleet.tuner(0).running());

  clock.AdvanceSeconds(0.5);
  events = fleet.Supervise(clock);
  ASSERT_EQ(events.size(), 1u) << Describe(events);
  EXPECT_EQ(events[0].kind, Kind::kRestarted);
  EXPECT_TRUE(fleet.tuner(0).running());
  EXPECT_NE(fleet.tuner(0).pid(), old_pid);
  // The new tuner registers with the tracker again.
  EXPECT_TRUE(fleet
                  .WaitForDevices(
                      [](const proto::ListDevicesResponse& d) {
                        for (const auto& w : d.workers()) {
                          if (w.role() == proto::TUNER && w.state() != "lost") return true;
                        }
                        return false;
                      },
                      60)
                  .ok());
}

TEST(FleetLauncherSuperviseTest, RestartsTheTrackerOnItsPortAndReportsItsExitCode) {
  FleetLauncher fleet(TrackerAndTuner());
  ASSERT_TRUE(fleet.Start().ok());
  FakeClock clock;
  ASSERT_TRUE(fleet.Supervise(clock).empty());
  const std::string address = fleet.address();
  // SIGTERM: the tracker shuts down cleanly and exits with code 0.
  KillAndReap(fleet.tracker(), SIGTERM);
  std::vector<FleetLauncher::ChildEvent> events = fleet.Supervise(clock);
  ASSERT_EQ(events.size(), 1u) << Describe(events);
  EXPECT_THAT(events[0].ToString(), HasSubstr("tracker exited with code 0"));
  clock.AdvanceSeconds(0.5);
  events = fleet.Supervise(clock);
  ASSERT_EQ(events.size(), 1u) << Describe(events);
  EXPECT_EQ(events[0].kind, Kind::kRestarted) << Describe(events);
  EXPECT_EQ(fleet.address(), address);
  EXPECT_TRUE(fleet.client().Devices().ok());
}

TEST(FleetLauncherSuperviseTest, GivesUpOnAChildThatKeepsDyingAndStopsAfterStop) {
  FleetLauncher fleet(TrackerAndTuner());
  ASSERT_TRUE(fleet.Start().ok());
  FakeClock clock;
  ASSERT_TRUE(fleet.Supervise(clock).empty());
  // Two restarts allowed (0.5 s, then 1 s of backoff); the third death within
  // a minute of its start is the last.
  for (double backoff_s : {0.5, 1.0}) {
    KillAndReap(fleet.tuner(0), SIGKILL);
    ASSERT_EQ(fleet.Supervise(clock).size(), 1u);
    clock.AdvanceSeconds(backoff_s);
    std::vector<FleetLauncher::ChildEvent> events = fleet.Supervise(clock);
    ASSERT_EQ(events.size(), 1u) << Describe(events);
    ASSERT_EQ(events[0].kind, Kind::kRestarted) << Describe(events);
  }
  KillAndReap(fleet.tuner(0), SIGKILL);
  std::vector<FleetLauncher::ChildEvent> events = fleet.Supervise(clock);
  ASSERT_EQ(events.size(), 1u) << Describe(events);
  EXPECT_EQ(events[0].kind, Kind::kGaveUp);
  EXPECT_THAT(events[0].ToString(), HasSubstr("tuner-0 killed by SIGKILL; not restarting it"));
  clock.AdvanceSeconds(100);
  EXPECT_TRUE(fleet.Supervise(clock).empty());
  EXPECT_FALSE(fleet.tuner(0).running());
  EXPECT_TRUE(fleet.tracker().running());

  // After Stop nothing is restarted.
  fleet.Stop(5);
  EXPECT_FALSE(fleet.tracker().running());
  clock.AdvanceSeconds(100);
  EXPECT_TRUE(fleet.Supervise(clock).empty());
  EXPECT_FALSE(fleet.tracker().running());
}

}  // namespace
}  // namespace tunefleet
