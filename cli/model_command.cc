#include "cli/model_command.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status_macros.h"
#include "proto_convert/model_job.h"
#include "toolchain/codegen/target.h"
#include "tuner_core/graph/model_source.h"
#include "tuner_core/models/model_zoo.h"
#include "tuner_core/selective/selective_plan.h"
#include "tuner_core/templates/task.h"
#include "tuner_core/workloads/workload.h"

namespace tunefleet {
namespace {

std::string DescribeTask(const ModelTask& task) {
  absl::StatusOr<std::unique_ptr<Workload>> workload = MakeWorkload(task.workload, task.args);
  return workload.ok() ? (*workload)->Describe() : task.workload + task.args.dump();
}

}  // namespace

[[nodiscard]] absl::Status RunTasks(const std::string& model, const OnnxImportOptions& onnx,
                                    std::ostream& out) {
  TF_ASSIGN_OR_RETURN(LoadedModel loaded, LoadModel(model, onnx));
  const std::vector<ModelTask>& tasks = loaded.tasks;
  double total_flops = 0;
  int total_layers = 0;
  for (const ModelTask& task : tasks) {
    total_flops += task.flops * task.num_layers;
    total_layers += task.num_layers;
  }
  out << absl::StrFormat("%s: %d tuning tasks for %d layers, %.3f GFLOP per inference (batch 1)\n",
                         model, tasks.size(), total_layers, total_flops / 1e9);
  out << absl::StrFormat("%-6s %-7s %-9s %-7s %s\n", "task", "layers", "MFLOP", "share",
                         "workload");
  for (size_t i = 0; i < tasks.size(); ++i) {
    const ModelTask& task = tasks[i];
    out << absl::StrFormat("%-6d %-7d %-9.1f %5.1f%%  %s\n", i + 1, task.num_layers,
                           task.flops / 1e6, 100.0 * task.flops_share, DescribeTask(task));
  }
  if (loaded.graph.has_value()) {
    int untuned = 0;
    for (const UntunedOperators& op : loaded.untuned) untuned += op.count;
    out << absl::StrFormat("not tuned: %d operators\n", untuned);
    for (const UntunedOperators& op : loaded.untuned) {
      out << absl::StrFormat("  %-20s %4d  %s\n", op.op_type, op.count, op.reason);
    }
  }
  return absl::OkStatus();
}

[[nodiscard]] absl::Status RunSimilarity(const std::string& model, const OnnxImportOptions& onnx,
                                         const std::string& target_in, double threshold,
                                         std::ostream& out) {
  TF_ASSIGN_OR_RETURN(LoadedModel loaded, LoadModel(model, onnx));
  const std::string target = target_in.empty() ? HostTargetString() : target_in;
  std::vector<std::unique_ptr<Task>> tasks;
  std::vector<const ConfigSpace*> spaces;
  for (const ModelTask& t : loaded.tasks) {
    TF_ASSIGN_OR_RETURN(std::unique_ptr<Task> task, Task::Make("", t.workload, t.args, target));
    spaces.push_back(&task->space());
    tasks.push_back(std::move(task));
  }
  const SelectivePlan plan = PlanSelectiveTuning(spaces, {.threshold = threshold});
  const int n = static_cast<int>(tasks.size());
  out << absl::StrFormat(
      "%s on %s: similarity of the %d tasks' spaces (Jaccard index of their "
      "config sets; 0 = nothing shared)\n",
      model, target, n);
  out << "task";
  for (int j = 0; j < n; ++j) out << absl::StrFormat(" %4d", j + 1);
  out << "\n";
  for (int i = 0; i < n; ++i) {
    out << absl::StrFormat("%4d", i + 1);
    for (int j = 0; j < n; ++j) {
      const double s = plan.similarity[i][j];
      out << (i == j ? "    -" : s == 0 ? "    ." : absl::StrFormat(" %4.2f", s));
    }
    out << absl::StrFormat("  %s %s\n", tasks[i]->name(), tasks[i]->workload().Describe());
  }
  out << absl::StrFormat("clusters (maximal cliques, edges at similarity >= %g): %d\n", threshold,
                         plan.clusters.size());
  for (const TaskCluster& cluster : plan.clusters) {
    out << "  {";
    for (size_t k = 0; k < cluster.members.size(); ++k) {
      out << (k ? ", " : "") << cluster.members[k] + 1;
    }
    out << "}  representative: task " << cluster.representative + 1 << "\n";
  }
  int alone = 0;
  std::string alone_list;
  for (int t = 0; t < n; ++t) {
    bool shares = false;
    for (int j = 0; j < n; ++j) shares |= j != t && plan.similarity[t][j] > 0;
    if (!shares) {
      ++alone;
      absl::StrAppend(&alone_list, alone_list.empty() ? "" : ", ", t + 1);
    }
  }
  int representatives = 0;
  for (int t = 0; t < n; ++t) representatives += plan.IsRepresentative(t);
  out << absl::StrFormat(
      "tuned first: %d of %d tasks; the others start from their representative's "
      "top configs\n",
      representatives, n);
  if (alone > 0) {
    out << absl::StrFormat("share no config with any other task (tuned on their own): %s\n",
                           alone_list);
  }
  return absl::OkStatus();
}

[[nodiscard]] absl::StatusOr<proto::JobSpec> ModelJobSpec(const std::string& model,
                                                          const OnnxImportOptions& onnx,
                                                          const std::string& target,
                                                          const ModelJobOptions& job) {
  TF_ASSIGN_OR_RETURN(LoadedModel loaded, LoadModel(model, onnx));
  return MakeModelJobSpec(model, loaded.tasks, target, job);
}

}  // namespace tunefleet
