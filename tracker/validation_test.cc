// One truth per key: where validation passes may go, and what the agents'
// figures for a winner say (the validation plan and its application are
// tested in trial_lifecycle_test with the other parts).
#include "tracker/validation.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kSearched = 3;  // the candidate every pass below validates

// A job with search trials 0..4 and validation trials of search trial 3
// from id 10 on.
class ConfirmationTest : public ::testing::Test {
 protected:
  ConfirmationTest() {
    for (int64_t id = 0; id < 5; ++id) job_.trials[id].id = id;
  }
  // A finished pass measured by `agent` at `cost`.
  void Pass(const std::string& agent, double cost) {
    Trial& t = NewPass();
    t.done = true;
    t.state = TrialState::kDone;
    t.result.add_costs(cost);
    t.result.set_agent(agent);
  }
  // A pass `agent` is measuring now.
  void Measuring(const std::string& agent) {
    Trial& t = NewPass();
    t.state = TrialState::kMeasuring;
    t.measuring_agent = agent;
  }
  // A pass waiting to be measured.
  Trial& Waiting() {
    Trial& t = NewPass();
    t.state = TrialState::kToMeasure;
    return t;
  }

  Job job_;

 private:
  Trial& NewPass() {
    const int64_t id = next_id_++;
    Trial& t = job_.trials[id];
    t.id = id;
    t.validates = kSearched;
    t.validation_pass = static_cast<int32_t>(id - 10);
    return t;
  }
  int64_t next_id_ = 10;
};

TEST_F(ConfirmationTest, APassGoesToAnAgentThatHasNotMeasuredItsCandidate) {
  Pass("agent-0", 1e-3);
  Trial& next = Waiting();
  // The key's agents that may measure, as the dispatcher asks about them.
  auto among = [](std::vector<std::string> names) -> AnotherAgentFn {
    return [names](const std::set<std::string>& used) {
      for (const std::string& name : names) {
        if (used.count(name) == 0) return true;
      }
      return false;
    };
  };
  const AnotherAgentFn two = among({"agent-0", "agent-1"});
  EXPECT_FALSE(ValidationMayGoTo(next, "agent-0", ValidationAgentsOf(job_), two));
  EXPECT_TRUE(ValidationMayGoTo(next, "agent-1", ValidationAgentsOf(job_), two));
  // Alone on its key, agent-0 measures every pass.
  EXPECT_TRUE(ValidationMayGoTo(next, "agent-0", ValidationAgentsOf(job_), among({"agent-0"})));
  // A pass in flight on agent-1 counts too: both have it, either may go on.
  Measuring("agent-1");
  EXPECT_TRUE(ValidationMayGoTo(next, "agent-0", ValidationAgentsOf(job_), two));
  // Search trials go anywhere.
  EXPECT_TRUE(ValidationMayGoTo(job_.trials.at(1), "agent-0", ValidationAgentsOf(job_), two));
}

TEST_F(ConfirmationTest, AgentsWithinTheNoiseConfirmTheWinner) {
  Pass("agent-0", 1.00e-3);
  Pass("agent-1", 1.02e-3);
  Pass("agent-0", 1.01e-3);
  const Confirmation c = ConfirmationOf(job_, kSearched);
  ASSERT_EQ(c.agent_costs.size(), 2u);
  EXPECT_NEAR(c.agent_costs[0].second, 1.005e-3, 1e-12);
  EXPECT_NEAR(c.apart, 1.02 / 1.005 - 1, 1e-9);
  EXPECT_DOUBLE_EQ(c.tolerance, kMinConfirmationTolerance);
  EXPECT_TRUE(c.confirmed());
  EXPECT_THAT(c.Describe(), HasSubstr("confirmed on 2 agents (agent-0 1.005 ms, agent-1 1.02 ms)"));
}

TEST_F(ConfirmationTest, AgentsBeyondTheNoiseDisagree) {
  Pass("agent-0", 1.00e-3);
  Pass("agent-1", 1.30e-3);
  Pass("agent-0", 1.01e-3);
  const Confirmation c = ConfirmationOf(job_, kSearched);
  EXPECT_TRUE(c.disagree());
  EXPECT_THAT(c.Describe(),
              HasSubstr("agents disagree (agent-0 1.005 ms, agent-1 1.3 ms): 29.4 %"));
}

TEST_F(ConfirmationTest, ANoisyAgentWidensTheBound) {
  // agent-0's own passes are 20 % apart: 23 % between agents is within
  // twice that.
  Pass("agent-0", 1.0e-3);
  Pass("agent-0", 1.2e-3);
  Pass("agent-1", 1.35e-3);
  const Confirmation c = ConfirmationOf(job_, kSearched);
  EXPECT_NEAR(c.tolerance, 2 * 0.2 / 1.1, 1e-9);
  EXPECT_TRUE(c.confirmed());
}

TEST_F(ConfirmationTest, OneAgentDoesNotConfirm) {
  Pass("agent-0", 1e-3);
  Pass("agent-0", 1e-3);
  const Confirmation c = ConfirmationOf(job_, kSearched);
  EXPECT_FALSE(c.confirmed());
  EXPECT_FALSE(c.disagree());
  EXPECT_THAT(c.Describe(), HasSubstr("not confirmed: every pass ran on agent-0"));
  EXPECT_THAT(ConfirmationOf(job_, /*searched=*/1).Describe(), HasSubstr("no validation pass"));
}

}  // namespace
}  // namespace tunefleet
