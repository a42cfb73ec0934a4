#include "tools/dep_check/layering.h"

#include <fstream>
#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// The rules the tree is checked against, as committed.
LayerRules TreeRules() {
  std::ifstream in("tools/dep_check/layers.txt");
  std::ostringstream text;
  text << in.rdbuf();
  absl::StatusOr<LayerRules> rules = ParseLayerRules(text.str());
  EXPECT_TRUE(rules.ok()) << rules.status();
  return rules.ok() ? *rules : LayerRules{};
}

TEST(LayeringTest, TopFolderOfLabels) {
  EXPECT_EQ(TopFolderOf("//tuner_core/ir:ir"), "tuner_core");
  EXPECT_EQ(TopFolderOf("//common:logging"), "common");
  EXPECT_EQ(TopFolderOf("//:readme"), "");
  EXPECT_EQ(TopFolderOf("@llvm//:llvm"), "@llvm");
}

TEST(LayeringTest, ParsesQueryGraphEdgesAndSkipsFrame) {
  absl::StatusOr<std::vector<DependencyEdge>> edges = ParseQueryGraph(
      "digraph mygraph {\n  node [shape=box];\n  \"//a:b\"\n  \"//a:b\" -> \"//c:d\"\n}\n");
  ASSERT_TRUE(edges.ok()) << edges.status();
  ASSERT_EQ(edges->size(), 1u);
  EXPECT_EQ((*edges)[0].from, "//a:b");
  EXPECT_EQ((*edges)[0].to, "//c:d");
}

TEST(LayeringTest, MalformedGraphLineIsNamed) {
  absl::StatusOr<std::vector<DependencyEdge>> edges = ParseQueryGraph("\"//a:b\" => //c\n");
  ASSERT_FALSE(edges.ok());
  EXPECT_THAT(edges.status().message(), HasSubstr("line 1"));
}

TEST(LayeringTest, MalformedRulesAreNamed) {
  EXPECT_FALSE(ParseLayerRules("common\n").ok());
  EXPECT_FALSE(ParseLayerRules("common:\ncommon:\n").ok());
  EXPECT_FALSE(ParseLayerRules("common: !tests\n").ok());
  absl::StatusOr<LayerRules> bad = ParseLayerRules("# c\ntracker: common/x\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("line 2"));
}

TEST(LayeringTest, TreeRulesAllowTheDirectionDesignMdDescribes) {
  const LayerRules rules = TreeRules();
  EXPECT_THAT(FindViolations(rules, {{"//tuner_core/ir:ir", "//common:status_macros"},
                                     {"//tracker:scheduler", "//tuner_core/templates:task"},
                                     {"//tracker:scheduler", "//proto:fleet_proto"},
                                     {"//toolchain/codegen:cpu", "//third_party:llvm"},
                                     {"//cli:tune_command", "//kernel_runtime:runner"},
                                     {"//bench:dense_bench", "//toolchain:builder"},
                                     {"//tests:fleet_test", "//cli:tune_command"},
                                     {"//common:logging", "//third_party:abseil"},
                                     {"//launcher:fleet_launcher", "//tracker:auth"},
                                     {"//cli:fleet_commands", "//launcher:fleet_launcher"},
                                     {"//bench:fleet_bench", "//launcher:fleet_launcher"}}),
              IsEmpty());
}

// The deliberately added forbidden edges the issue asks to see refused.
TEST(LayeringTest, TreeRulesRefuseEdgesAgainstTheDirection) {
  const LayerRules rules = TreeRules();
  EXPECT_THAT(FindViolations(rules, {{"//common:logging", "//tracker:scheduler"}}),
              ElementsAre(HasSubstr("//common:logging -> //tracker:scheduler")));
  EXPECT_THAT(FindViolations(rules, {{"//common:trial_result", "//tuner_core/measure:measure"}}),
              ElementsAre(HasSubstr("\"common\" may depend only on its own folder")));
  EXPECT_THAT(FindViolations(rules, {{"//tracker:scheduler", "//kernel_runtime:time_evaluator"}}),
              ElementsAre(HasSubstr("\"tracker\" may depend only on its own folder")));
  EXPECT_THAT(FindViolations(rules, {{"//bench:fleet_bench", "//tests:fleet_harness"}}),
              ElementsAre(HasSubstr("must not depend on //tests")));
  EXPECT_THAT(FindViolations(rules, {{"//bench:dense_bench", "//cli:tune_command"}}),
              ElementsAre(HasSubstr("must not depend on //cli")));
  EXPECT_THAT(FindViolations(rules, {{"//kernel_runtime:runner", "//third_party:llvm"}}),
              ElementsAre(HasSubstr("must not depend on //third_party:llvm")));
  EXPECT_THAT(FindViolations(rules, {{"//tuner_core/ir:ir", "//third_party:grpc"}}),
              ElementsAre(HasSubstr("must not depend on //third_party:grpc")));
  EXPECT_THAT(FindViolations(rules, {{"//launcher:fleet_launcher", "//tests:fake_agent"}}),
              ElementsAre(HasSubstr("must not depend on //tests")));
  EXPECT_THAT(FindViolations(rules, {{"//clients/cpp:fleet_client", "//launcher:fleet_launcher"}}),
              ElementsAre(HasSubstr("\"clients\" may depend only on its own folder")));
  // The daemons are leaves: the libraries below them (the toolchain, the
  // kernel runtime, the job driver, local mode, the compiler) never reach up.
  EXPECT_THAT(
      FindViolations(rules, {{"//compiler:model_compiler", "//builder_worker:builder_daemon"}}),
      ElementsAre(HasSubstr("\"compiler\" may depend only on its own folder")));
  EXPECT_THAT(FindViolations(rules, {{"//local:model_job", "//tuner_process:tuner_service"}}),
              ElementsAre(HasSubstr("\"local\" may depend only on its own folder")));
  EXPECT_THAT(FindViolations(rules, {{"//toolchain:builder", "//builder_worker:build_service"}}),
              ElementsAre(HasSubstr("\"toolchain\" may depend only on its own folder")));
  EXPECT_THAT(FindViolations(rules, {{"//kernel_runtime:runner", "//device_agent:agent_service"}}),
              ElementsAre(HasSubstr("\"kernel_runtime\" may depend only on its own folder")));
  EXPECT_THAT(FindViolations(rules, {{"//newfolder:x", "//common:logging"}}),
              ElementsAre(HasSubstr("has no layer rule")));
}

TEST(LayeringTest, AllowedLabelIsAnExceptionToItsFolder) {
  absl::StatusOr<LayerRules> rules = ParseLayerRules("a: * !//tests +//tests:fake\n");
  ASSERT_TRUE(rules.ok()) << rules.status();
  EXPECT_THAT(FindViolations(*rules, {{"//a:x", "//tests:fake"}}), IsEmpty());
  EXPECT_THAT(FindViolations(*rules, {{"//a:x", "//tests:other"}}),
              ElementsAre(HasSubstr("//tests")));
  EXPECT_FALSE(ParseLayerRules("a: +//tests\n").ok());
}

TEST(LayeringTest, ForbiddenPrefixDoesNotMatchLongerFolderNames) {
  absl::StatusOr<LayerRules> rules = ParseLayerRules("a: * !//tests\n");
  ASSERT_TRUE(rules.ok());
  EXPECT_THAT(FindViolations(*rules, {{"//a:x", "//tests_data:y"}}), IsEmpty());
  EXPECT_THAT(FindViolations(*rules, {{"//a:x", "//tests/sub:y"}}),
              ElementsAre(HasSubstr("//tests")));
}

}  // namespace
}  // namespace tunefleet
