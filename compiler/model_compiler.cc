#include "compiler/model_compiler.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <optional>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "compiler/kernel_choice.h"
#include "compiler/layout_choice.h"
#include "compiler/lower_model.h"
#include "compiler/model_archive.h"
#include "compiler/runtime/model_runtime.h"
#include "target/cpuinfo.h"
#include "toolchain/builder.h"
#include "toolchain/codegen/llvm_backend.h"
#include "toolchain/codegen/llvm_headers.h"
#include "toolchain/codegen/target.h"
#include "toolchain/default_config.h"
#include "toolchain/linker.h"
#include "tuner_core/graph/model_source.h"
#include "tuner_core/ir/ir_visitor.h"

namespace tunefleet {
namespace {

[[nodiscard]] absl::Status WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) return absl::InternalError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

// The CPU features the target's code may use (its Arch's ModelFeatures), as
// target/host.h's HostCpuFeatures() names them (/proc/cpuinfo flags on x86,
// the kernel's HWCAP names on AArch64), so a library opened on a CPU without them is
// refused by name instead of dying of SIGILL.
[[nodiscard]] absl::StatusOr<std::vector<std::string>> RequiredFeatures(const TargetSpec& target) {
  std::string error;
  const llvm::Target* llvm_target = llvm::TargetRegistry::lookupTarget(target.triple, error);
  if (llvm_target == nullptr) return absl::InvalidArgumentError(error);
  std::unique_ptr<llvm::MCSubtargetInfo> sti(
      llvm_target->createMCSubtargetInfo(target.triple, target.cpu, target.features));
  std::vector<std::string> features;
  for (const FeatureName& feature : target.arch->ModelFeatures()) {
    if (sti != nullptr && sti->checkFeatures(feature.llvm)) features.push_back(feature.host);
  }
  return features;
}

// Whether `body` marks regions of `buffer` ready (ir::OutputReady).
bool MarksReady(const ir::Stmt& body, const std::string& buffer) {
  struct Finder : ir::IRVisitor {
    const std::string* buffer;
    bool found = false;
    void VisitOutputReady(const ir::OutputReady* op) override {
      found = found || op->buffer == *buffer;
    }
  } finder;
  finder.buffer = &buffer;
  finder.Visit(body);
  return finder.found;
}

// Where the steps of kernel `symbol` that have an epilogue pass their
// output: its index among their staged buffers, or -1 for the output
// tensor; nullopt when none has an epilogue, they disagree, or one's
// output holds fewer than `min_bytes` bytes.
std::optional<int> HookOutput(const ModelPlan& plan, const std::string& symbol, int64_t min_bytes) {
  std::optional<int> where;
  for (const PlanStep& step : plan.steps) {
    if (step.op != StepOp::kKernel || step.symbol != symbol || step.epilogue.empty()) continue;
    const int64_t bytes =
        plan.buffers[static_cast<size_t>(step.outputs[0])].elements * int64_t{sizeof(float)};
    if (bytes < min_bytes) return std::nullopt;  // its output stays in cache: the pass is faster
    const auto it = std::find(step.staged.begin(), step.staged.end(), step.outputs[0]);
    const int index = it == step.staged.end() ? -1 : static_cast<int>(it - step.staged.begin());
    if (where.has_value() && *where != index) return std::nullopt;
    where = index;
  }
  return where;
}

// CompileOptions::epilogue_hook_min_bytes resolved: the host's last-level
// cache where it asks for it and the model is compiled for the host.
int64_t EpilogueHookMinBytes(const CompileOptions& options) {
  if (options.epilogue_hook_min_bytes != kEpilogueHookAboveHostCache) {
    return options.epilogue_hook_min_bytes;
  }
  if (options.target != HostTargetString()) return kNoEpilogueHook;  // its caches are unknown here
  const int64_t llc = HostLastLevelCacheBytes();
  return llc > 0 ? llc : kNoEpilogueHook;
}

// One kernel as an object file, through the toolchain's one pipeline
// (BuildKernelObject), renamed to `symbol` so many kernels share one
// library. Appends the symbols it defines to `exported` (for the static
// archive's table).
// `hook_output`: where the steps the kernel serves pass their output, as
// an index among its staged buffers (a blocked convolution's) or -1 for its
// output tensor; nullopt: no step has an epilogue. Sets `*hooked` when the
// kernel applies the epilogue itself through its hook (its template marks
// that output's regions ready), false when the steps must run it after.
[[nodiscard]] absl::StatusOr<std::string> CompileKernel(const KernelToBuild& kernel,
                                                        const TargetSpec& target, int opt_level,
                                                        std::optional<int> hook_output,
                                                        bool* hooked,
                                                        std::vector<ExportedSymbol>& exported) {
  const Task& task = *kernel.choice.task;
  KernelObjectOptions options;
  options.opt_level = opt_level;
  options.symbol = kernel.symbol;
  if (hook_output.has_value()) {
    options.epilogue_hook = [&](const ir::LoweredFunc& func) -> std::string {
      std::string output;
      if (*hook_output >= 0 && *hook_output < static_cast<int>(func.staged.size())) {
        output = func.staged[*hook_output].name;
      }
      for (const ir::BufferArg& arg : func.args) {
        if (*hook_output < 0 && arg.is_output && output.empty()) output = arg.name;
      }
      return !output.empty() && MarksReady(func.body, output) ? output : "";
    };
  }
  KernelObject object =
      BuildKernelObject(task.tmpl(), task.workload(), kernel.choice.config, target, options);
  if (!object.ok()) {
    return absl::Status(object.status().code(),
                        absl::StrCat("kernel ", kernel.symbol, " (", task.name(), " for ",
                                     task.workload().Describe(), ", config ",
                                     kernel.choice.config.ToString(), "): ", object.error_msg));
  }
  *hooked = !object.epilogue_buffer.empty();
  exported.insert(exported.end(), object.symbols.begin(), object.symbols.end());
  return std::move(object.object);
}

// The plan and the weights as an object: two read-only globals.
[[nodiscard]] absl::StatusOr<std::string> DataObject(const BuiltPlan& built,
                                                     const TargetSpec& target) {
  llvm::LLVMContext context;
  llvm::Module module("tf_model_data", context);
  const std::string plan = built.plan.ToJson().dump();
  auto* plan_init = llvm::ConstantDataArray::getString(context, plan, /*AddNull=*/true);
  auto* plan_global =
      new llvm::GlobalVariable(module, plan_init->getType(), true,
                               llvm::GlobalValue::ExternalLinkage, plan_init, kPlanSymbol);
  plan_global->setAlignment(llvm::Align(8));
  std::vector<float> weights = built.weights;
  if (weights.empty()) weights.push_back(0);
  llvm::StringRef raw(reinterpret_cast<const char*>(weights.data()),
                      weights.size() * sizeof(float));
  llvm::Constant* weights_init =
      llvm::ConstantDataArray::getRaw(raw, weights.size(), llvm::Type::getFloatTy(context));
  auto* weights_global =
      new llvm::GlobalVariable(module, weights_init->getType(), true,
                               llvm::GlobalValue::ExternalLinkage, weights_init, kWeightsSymbol);
  weights_global->setAlignment(llvm::Align(64));
  return OptimizeAndEmitObject(module, target, /*opt_level=*/0, nullptr);
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

[[nodiscard]] absl::StatusOr<CompileReport> CompileModel(const CompileOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  if (options.output_dir.empty()) return absl::InvalidArgumentError("compile needs -o DIR");
  if (!IsModelFile(options.model)) {
    return absl::InvalidArgumentError(
        absl::StrCat("compile needs an ONNX file: the built-in model '", options.model,
                     "' is a list of layer shapes without weights (export it with "
                     "tuner_core/graph/export_onnx.py, e.g. --models resnet18)"));
  }
  TF_ASSIGN_OR_RETURN(TargetSpec target, ParseTarget(options.target));
  if (target.arch->is_gpu()) {
    return absl::UnimplementedError(
        absl::StrCat("compile supports CPU targets (x86-64, AArch64); '", options.target, "' is ",
                     target.triple));
  }
  TF_ASSIGN_OR_RETURN(LoadedModel model, LoadModel(options.model, options.onnx));
  TF_ASSIGN_OR_RETURN(RecordSelection records,
                      SelectRecords(options.records, model.layers, options.target));
  CompileReport report;
  report.warnings = records.warnings;
  // Default configs use the target's own vector registers (4 lanes on NEON,
  // whose max_vector_bits counts the 4 registers LLVM may gang together).
  const int lanes = TargetVectorLanes(target);
  LayoutChoice layouts;
  if (options.layout_aware) {
    TF_ASSIGN_OR_RETURN(layouts,
                        ChooseLayouts(*model.graph, model.layers, records, options.target, lanes));
    report.layout_choices = layouts.notes;
  }
  ChooseKernelFn choose = [&](const ModelLayer& layer) -> absl::StatusOr<KernelChoice> {
    auto picked = layouts.record_index.find(layer.name);
    absl::StatusOr<KernelChoice> chosen =
        picked == layouts.record_index.end()
            ? ChooseKernel(layer, records, options.target, lanes,
                           layouts.one_vector_defaults.count(layer.name) > 0
                               ? DefaultTile::kOneVector
                               : DefaultTile::kTarget)
            : KernelChoiceOfRecord(CandidateRecords(layer, records).at(picked->second).first,
                                   CandidateRecords(layer, records).at(picked->second).second,
                                   records.path, options.target);
    TF_ASSIGN_OR_RETURN(KernelChoice choice, std::move(chosen));
    if (choice.tuned) {
      ++report.tuned_layers;
    } else {
      ++report.default_layers;
      report.warnings.push_back(absl::StrCat("layer '", layer.name, "' (", layer.workload, " ",
                                             layer.args.dump(), "): no record for '",
                                             options.target, "', using the default config of ",
                                             choice.task->name(), " ", choice.config.ToString()));
    }
    report.layers.push_back(absl::StrCat(layer.name, ": ", choice.task->name(), " ",
                                         choice.config.ToString(), " from ", choice.source));
    return choice;
  };
  TF_ASSIGN_OR_RETURN(BuiltPlan built, LowerModel(*model.graph, model.layers, choose));
  built.plan.target = options.target;
  built.plan.triple = target.triple;
  TF_ASSIGN_OR_RETURN(built.plan.required_features, RequiredFeatures(target));

  if (mkdir(options.output_dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return absl::InvalidArgumentError(absl::StrCat("cannot create ", options.output_dir));
  }
  std::vector<ArchiveMember> members;
  std::vector<ExportedSymbol> exported = {{kPlanSymbol, false}, {kWeightsSymbol, false}};
  const int64_t hook_min_bytes = EpilogueHookMinBytes(options);
  for (const KernelToBuild& kernel : built.kernels) {
    const std::optional<int> hook_output =
        hook_min_bytes == kNoEpilogueHook ? std::nullopt
                                          : HookOutput(built.plan, kernel.symbol, hook_min_bytes);
    bool hooked = false;
    TF_ASSIGN_OR_RETURN(std::string object, CompileKernel(kernel, target, options.opt_level,
                                                          hook_output, &hooked, exported));
    members.push_back({absl::StrCat(kernel.symbol, ".o"), std::move(object)});
    for (PlanStep& step : built.plan.steps) {
      if (step.op == StepOp::kKernel && step.symbol == kernel.symbol && !step.epilogue.empty()) {
        step.epilogue.in_kernel = hooked;
      }
    }
  }
  TF_ASSIGN_OR_RETURN(std::string data, DataObject(built, target));
  members.push_back({"tf_model_data.o", std::move(data)});

  // model.so: lld links the objects, written beside it for the link only.
  std::vector<std::string> objects;
  struct Cleanup {
    std::vector<std::string>* paths;
    ~Cleanup() {
      for (const std::string& p : *paths) unlink(p.c_str());
    }
  } cleanup{&objects};
  for (const ArchiveMember& member : members) {
    objects.push_back(absl::StrCat(options.output_dir, "/", member.name));
    TF_RETURN_IF_ERROR(WriteFile(objects.back(), member.bytes));
  }
  report.library = absl::StrCat(options.output_dir, "/", kModelLibraryName);
  TF_RETURN_IF_ERROR(LinkSharedObjectFiles(objects, report.library, LinkOptions{}));

  // libmodel.a: the same objects and the table tf_model_open_linked reads.
  TF_ASSIGN_OR_RETURN(std::string table, LinkedTableObject(exported, target));
  members.push_back({"tf_model_linked.o", std::move(table)});
  report.archive = absl::StrCat(options.output_dir, "/", kModelArchiveName);
  TF_RETURN_IF_ERROR(WriteStaticArchive(report.archive, members));
  report.kernels = static_cast<int>(built.kernels.size());
  report.seconds = SecondsSince(start);
  return report;
}

}  // namespace tunefleet
