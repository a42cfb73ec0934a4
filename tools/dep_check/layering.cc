#include "tools/dep_check/layering.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace tunefleet {
namespace {

bool IsOurLabel(absl::string_view label) { return absl::StartsWith(label, "//"); }

// "//third_party:llvm" matches the forbidden entry "//third_party:llvm" and
// "//tests" matches "//tests:fleet_harness" and "//tests/x:y", but not
// "//tests_more:z".
bool MatchesForbidden(absl::string_view label, absl::string_view forbidden) {
  if (!absl::StartsWith(label, forbidden)) return false;
  if (label.size() == forbidden.size()) return true;
  const char next = label[forbidden.size()];
  return next == ':' || next == '/';
}

}  // namespace

[[nodiscard]] absl::StatusOr<LayerRules> ParseLayerRules(absl::string_view text) {
  LayerRules rules;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || absl::StartsWith(line, "#")) continue;
    const size_t colon = line.find(':');
    if (colon == absl::string_view::npos || colon == 0) {
      return absl::InvalidArgumentError(absl::StrCat("layer rules line ", line_number,
                                                     ": expected \"FOLDER: ALLOWED ...\", got \"",
                                                     line, "\""));
    }
    const std::string folder(absl::StripAsciiWhitespace(line.substr(0, colon)));
    if (rules.folders.count(folder) > 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "layer rules line ", line_number, ": folder \"", folder, "\" has a rule already"));
    }
    FolderRule& rule = rules.folders[folder];
    for (absl::string_view word :
         absl::StrSplit(line.substr(colon + 1), ' ', absl::SkipWhitespace())) {
      if (word == "*") {
        rule.allow_all_folders = true;
      } else if (absl::ConsumePrefix(&word, "+")) {
        if (!absl::StartsWith(word, "//") || !absl::StrContains(word, ":")) {
          return absl::InvalidArgumentError(absl::StrCat("layer rules line ", line_number,
                                                         ": allowed entry \"+", word,
                                                         "\" must be a whole label //folder:name"));
        }
        rule.allowed_labels.emplace(word);
      } else if (absl::ConsumePrefix(&word, "!")) {
        if (!absl::StartsWith(word, "//") && !absl::StartsWith(word, "@")) {
          return absl::InvalidArgumentError(
              absl::StrCat("layer rules line ", line_number, ": forbidden entry \"!", word,
                           "\" must be a label or prefix starting with // or @"));
        }
        rule.forbidden.emplace_back(word);
      } else if (absl::StrContains(word, "/") || absl::StrContains(word, ":")) {
        return absl::InvalidArgumentError(absl::StrCat("layer rules line ", line_number, ": \"",
                                                       word, "\" is not a top-level folder name"));
      } else {
        rule.allowed_folders.emplace(word);
      }
    }
  }
  return rules;
}

[[nodiscard]] absl::StatusOr<std::vector<DependencyEdge>> ParseQueryGraph(absl::string_view graph) {
  std::vector<DependencyEdge> edges;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(graph, '\n')) {
    ++line_number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line == "}" || absl::StartsWith(line, "digraph") ||
        absl::StartsWith(line, "node ")) {
      continue;
    }
    const size_t arrow = line.find("\" -> \"");
    if (arrow == absl::string_view::npos) {
      // A node with no edges: `"//a:b"`.
      if (line.size() >= 2 && line.front() == '"' && line.back() == '"') continue;
      return absl::InvalidArgumentError(absl::StrCat(
          "dependency graph line ", line_number, ": expected \"A\" -> \"B\", got \"", line, "\""));
    }
    absl::string_view from = line.substr(0, arrow + 1);
    absl::string_view to = line.substr(arrow + 5);
    if (!absl::ConsumePrefix(&from, "\"") || !absl::ConsumeSuffix(&from, "\"") ||
        !absl::ConsumePrefix(&to, "\"") || !absl::ConsumeSuffix(&to, "\"")) {
      return absl::InvalidArgumentError(absl::StrCat("dependency graph line ", line_number,
                                                     ": unquoted label in \"", line, "\""));
    }
    edges.push_back({std::string(from), std::string(to)});
  }
  return edges;
}

std::string TopFolderOf(absl::string_view label) {
  if (absl::StartsWith(label, "@")) {
    return std::string(label.substr(0, label.find("//")));
  }
  absl::ConsumePrefix(&label, "//");
  const size_t end = label.find_first_of("/:");
  return std::string(label.substr(0, end));
}

std::vector<std::string> FindViolations(const LayerRules& rules,
                                        const std::vector<DependencyEdge>& edges) {
  static const FolderRule kNothingAllowed;
  std::vector<std::string> violations;
  for (const DependencyEdge& edge : edges) {
    if (!IsOurLabel(edge.from)) continue;  // inside an external repository
    const std::string from_folder = TopFolderOf(edge.from);
    const std::string to_folder = TopFolderOf(edge.to);
    auto it = rules.folders.find(from_folder);
    const FolderRule& rule = it == rules.folders.end() ? kNothingAllowed : it->second;
    const bool has_rule = it != rules.folders.end();

    if (rule.allowed_labels.count(edge.to) > 0) continue;
    std::string broken;
    for (const std::string& forbidden : rule.forbidden) {
      if (MatchesForbidden(edge.to, forbidden)) {
        broken = absl::StrCat("\"", from_folder, "\" must not depend on ", forbidden);
        break;
      }
    }
    // The root package holds only exported files and the visibility groups.
    const bool always_allowed = to_folder == from_folder || to_folder == "third_party" ||
                                to_folder.empty() || !IsOurLabel(edge.to);
    if (broken.empty() && !always_allowed && !rule.allow_all_folders &&
        rule.allowed_folders.count(to_folder) == 0) {
      broken = has_rule ? absl::StrCat("\"", from_folder, "\" may depend only on its own folder",
                                       rule.allowed_folders.empty() ? "" : " and ",
                                       absl::StrJoin(rule.allowed_folders, ", "))
                        : absl::StrCat("folder \"", from_folder,
                                       "\" has no layer rule, so it may depend on nothing of ours");
    }
    if (!broken.empty()) {
      violations.push_back(absl::StrCat(edge.from, " -> ", edge.to, ": ", broken));
    }
  }
  return violations;
}

}  // namespace tunefleet
