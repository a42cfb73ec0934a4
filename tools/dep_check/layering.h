// Layering rules for the tree's top-level folders, and the check of a
// dependency graph against them (issue 15: dependencies point one way).
//
// Use it through the `layering_check` binary, which scripts/test.sh runs over
// the graph `bazel query` prints:
//
//   absl::StatusOr<LayerRules> rules = ParseLayerRules(rules_text);
//   absl::StatusOr<std::vector<DependencyEdge>> edges = ParseQueryGraph(graph);
//   std::vector<std::string> violations = FindViolations(*rules, *edges);
//
// The rules text is tools/dep_check/layers.txt: one line per folder,
// `FOLDER: ALLOWED ... [!FORBIDDEN ...] [+LABEL ...]`. A target may always
// depend on its own folder, on //third_party, on the root package (exported
// files, visibility groups) and on external repositories,
// except on the labels (or label prefixes) its folder forbids with '!'. '*'
// allows every folder but the forbidden ones; '+//x:y' allows that one label
// whatever its folder. A folder without a line may depend on nothing of ours.
#ifndef TUNEFLEET_TOOLS_DEP_CHECK_LAYERING_H_
#define TUNEFLEET_TOOLS_DEP_CHECK_LAYERING_H_

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tunefleet {

struct FolderRule {
  bool allow_all_folders = false;
  std::set<std::string> allowed_folders;
  // Labels or label prefixes ("//tests", "//third_party:llvm", "@llvm").
  std::vector<std::string> forbidden;
  // Labels allowed although their folder is not (or is forbidden): "+//x:y".
  std::set<std::string> allowed_labels;
};

struct LayerRules {
  std::map<std::string, FolderRule> folders;
};

struct DependencyEdge {
  std::string from;  // "//tracker:scheduler"
  std::string to;    // "//common:logging", "@llvm//:llvm"
};

// InvalidArgument naming the line for a malformed rules text.
[[nodiscard]] absl::StatusOr<LayerRules> ParseLayerRules(absl::string_view text);

// Reads `bazel query --output=graph --nograph:factored` output: lines
// `"A" -> "B"`; node-only lines and the digraph frame are skipped.
// InvalidArgument naming the line for anything else.
[[nodiscard]] absl::StatusOr<std::vector<DependencyEdge>> ParseQueryGraph(absl::string_view graph);

// The top-level folder of a label: "//tuner_core/ir:ir" -> "tuner_core",
// "//:x" -> "" (the root package), "@llvm//:llvm" -> "@llvm".
std::string TopFolderOf(absl::string_view label);

// One line per edge that breaks the rules, naming both ends and the rule.
std::vector<std::string> FindViolations(const LayerRules& rules,
                                        const std::vector<DependencyEdge>& edges);

}  // namespace tunefleet

#endif  // TUNEFLEET_TOOLS_DEP_CHECK_LAYERING_H_
