// layering_check --rules tools/dep_check/layers.txt --graph graph.txt
// Prints every dependency edge that breaks the layer rules and exits 1 if
// there is one; exits 2 when the rules or the graph cannot be read.
// The graph is `bazel query --output=graph --nograph:factored --noimplicit_deps
// 'deps(//...)'` (scripts/test.sh writes it).
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "common/file_util.h"
#include "tools/dep_check/layering.h"

ABSL_FLAG(std::string, rules, "", "layer rules file (tools/dep_check/layers.txt)");
ABSL_FLAG(std::string, graph, "", "bazel query --output=graph file");

namespace {

// The rules file or a `bazel query --output=graph` dump (tens of MB at most).
bool ReadFile(const std::string& path, std::string* out) {
  absl::StatusOr<std::string> text = tunefleet::ReadFileToString(path, tunefleet::kMaxLogFileBytes);
  if (!text.ok()) return false;
  *out = *std::move(text);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  std::string rules_text, graph_text;
  if (!ReadFile(absl::GetFlag(FLAGS_rules), &rules_text)) {
    std::fprintf(stderr, "layering_check: cannot read --rules '%s'\n",
                 absl::GetFlag(FLAGS_rules).c_str());
    return 2;
  }
  if (!ReadFile(absl::GetFlag(FLAGS_graph), &graph_text)) {
    std::fprintf(stderr, "layering_check: cannot read --graph '%s'\n",
                 absl::GetFlag(FLAGS_graph).c_str());
    return 2;
  }
  absl::StatusOr<tunefleet::LayerRules> rules = tunefleet::ParseLayerRules(rules_text);
  absl::StatusOr<std::vector<tunefleet::DependencyEdge>> edges =
      tunefleet::ParseQueryGraph(graph_text);
  if (!rules.ok() || !edges.ok()) {
    std::fprintf(stderr, "layering_check: %s\n",
                 (!rules.ok() ? rules.status() : edges.status()).ToString().c_str());
    return 2;
  }
  const std::vector<std::string> violations = tunefleet::FindViolations(*rules, *edges);
  for (const std::string& v : violations) std::printf("forbidden dependency: %s\n", v.c_str());
  std::printf("layering_check: %zu edges, %zu forbidden\n", edges->size(), violations.size());
  return violations.empty() ? 0 : 1;
}
