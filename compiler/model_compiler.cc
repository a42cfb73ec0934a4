#include "compiler/model_compiler.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <optional>
#include <utility>

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

// Where a step passes its output: its index among its staged buffers, or
// -1 for its output tensor.
int StepOutputAt(const PlanStep& step) {
  const auto it = std::find(step.staged.begin(), step.staged.end(), step.outputs[0]);
  return it == step.staged.end() ? -1 : static_cast<int>(it - step.staged.begin());
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
    const int index = StepOutputAt(step);
    if (where.has_value() && *where != index) return std::nullopt;
    where = index;
  }
  return where;
}

// The activations a kernel's stores compute (toolchain/passes/
// fuse_epilogue.h); `exp`: one made of exp, stored only on request.
struct StoredActivation {
  PointwiseFunc func;
  StoreActivation stored;
  bool exp;
};
constexpr StoredActivation kStoredActivations[] = {
    {PointwiseFunc::kNone, StoreActivation::kNone, false},
    {PointwiseFunc::kRelu, StoreActivation::kRelu, false},
    {PointwiseFunc::kClip, StoreActivation::kClip, false},
    {PointwiseFunc::kLeakyRelu, StoreActivation::kLeakyRelu, false},
    {PointwiseFunc::kHardSigmoid, StoreActivation::kHardSigmoid, false},
    {PointwiseFunc::kHardSwish, StoreActivation::kHardSwish, false},
    {PointwiseFunc::kExp, StoreActivation::kExp, true},
    {PointwiseFunc::kSigmoid, StoreActivation::kSigmoid, true},
    {PointwiseFunc::kSilu, StoreActivation::kSilu, true},
    {PointwiseFunc::kTanh, StoreActivation::kTanh, true},
    {PointwiseFunc::kGelu, StoreActivation::kGelu, true},
    {PointwiseFunc::kGeluTanh, StoreActivation::kGeluTanh, true},
    {PointwiseFunc::kElu, StoreActivation::kElu, true},
};

// A plan's epilogue as a store computes it; nullopt where its activation is
// not one a store computes, or is an exp one and not `exp_too`.
std::optional<StoreEpilogue> StoreEpilogueOf(const PlanEpilogue& e, bool exp_too) {
  for (const StoredActivation& a : kStoredActivations) {
    if (a.func != e.activation.func) continue;
    if (a.exp && !exp_too) return std::nullopt;
    return StoreEpilogue{.bias = e.bias >= 0,
                         .residual = e.residual >= 0,
                         .activation = a.stored,
                         .alpha = e.activation.alpha,
                         .beta = e.activation.beta};
  }
  return std::nullopt;
}

// What the stores of a step's kernel compute of its epilogue, and where the
// step passes its output (StepOutputAt); nullopt when it has none or its
// activation is not a store's (the exp ones only with `exp_too`).
std::optional<std::pair<int, StoreEpilogue>> StepStoreEpilogue(const PlanStep& step, bool exp_too) {
  if (step.epilogue.empty()) return std::nullopt;
  std::optional<StoreEpilogue> e = StoreEpilogueOf(step.epilogue, exp_too);
  if (!e.has_value()) return std::nullopt;
  return std::make_pair(StepOutputAt(step), *e);
}

// Whether two steps' stores compute the same epilogue (or both none).
bool SameStoreEpilogue(const std::optional<std::pair<int, StoreEpilogue>>& a,
                       const std::optional<std::pair<int, StoreEpilogue>>& b) {
  if (!a.has_value() || !b.has_value()) return a.has_value() == b.has_value();
  const StoreEpilogue &x = a->second, &y = b->second;
  return a->first == b->first && x.bias == y.bias && x.residual == y.residual &&
         x.activation == y.activation && x.alpha == y.alpha && x.beta == y.beta;
}

// A kernel to build under `symbol`, and the epilogue its stores compute
// for every step it serves (StepStoreEpilogue; nullopt: none, the steps
// run theirs after it).
struct KernelBuild {
  const KernelToBuild* kernel;
  std::string symbol;
  std::optional<std::pair<int, StoreEpilogue>> in_stores;
};

// One kernel per epilogue its steps' stores compute: a kernel serving steps
// whose epilogues differ (ResNet's two 3x3 convolutions of a block, one
// adding the residual) is built once more, under a new symbol, for each
// further epilogue: the same config's code with other stores. Returns every
// kernel to build, each under its own symbol first. Without
// `in_stores`, every kernel once with none.
std::vector<KernelBuild> KernelBuilds(BuiltPlan* built, bool in_stores, bool exp_too) {
  std::vector<KernelBuild> builds;
  for (const KernelToBuild& kernel : built->kernels) {
    if (!in_stores) {
      builds.push_back({&kernel, kernel.symbol, std::nullopt});
      continue;
    }
    const size_t first = builds.size();  // this kernel's builds, first seen first
    for (PlanStep& step : built->plan.steps) {
      if (step.op != StepOp::kKernel || step.symbol != kernel.symbol) continue;
      const std::optional<std::pair<int, StoreEpilogue>> e = StepStoreEpilogue(step, exp_too);
      size_t index = 0;
      while (first + index < builds.size() &&
             !SameStoreEpilogue(builds[first + index].in_stores, e)) {
        ++index;
      }
      if (first + index == builds.size()) {
        builds.push_back(
            {&kernel, index == 0 ? kernel.symbol : absl::StrCat(kernel.symbol, "_e", index), e});
      }
      step.symbol = builds[first + index].symbol;
    }
    if (builds.size() == first) builds.push_back({&kernel, kernel.symbol, std::nullopt});
  }
  return builds;
}

// The buffer of `func` a step's output is at `where` (an index among its
// staged buffers, or -1: its output argument); "" when it has none.
std::string OutputBufferAt(const ir::LoweredFunc& func, int where) {
  if (where >= 0) {
    return where < static_cast<int>(func.staged.size()) ? func.staged[where].name : "";
  }
  for (const ir::BufferArg& arg : func.args) {
    if (arg.is_output) return arg.name;
  }
  return "";
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
// (BuildKernelObject), named `symbol` so many kernels share one library.
// Appends the symbols it defines to `exported` (for the static archive's
// table).
// `in_stores`: the epilogue its final stores are to compute and where the
// steps it serves pass their output (KernelBuilds); sets `*stored` when
// they do (its template marks every store of that output).
// `hook_output`: where the steps pass their output, as an index among its
// staged buffers (a blocked convolution's) or -1 for its output tensor;
// nullopt: no hook. Sets `*hooked` when the kernel applies the epilogue
// through its hook (its template marks that output's regions ready).
// Neither: the steps run it after the kernel.
[[nodiscard]] absl::StatusOr<std::string> CompileKernel(
    const KernelToBuild& kernel, const std::string& symbol, const TargetSpec& target, int opt_level,
    std::optional<int> hook_output, const std::optional<std::pair<int, StoreEpilogue>>& in_stores,
    bool* hooked, bool* stored, std::vector<ExportedSymbol>& exported) {
  const Task& task = *kernel.choice.task;
  KernelObjectOptions options;
  options.opt_level = opt_level;
  options.symbol = symbol;
  if (in_stores.has_value()) {
    options.store_epilogue = [&](const ir::LoweredFunc& func) -> std::optional<StoreEpilogue> {
      StoreEpilogue e = in_stores->second;
      e.buffer = OutputBufferAt(func, in_stores->first);
      if (e.buffer.empty()) return std::nullopt;
      return e;
    };
  }
  if (hook_output.has_value()) {
    options.epilogue_hook = [&](const ir::LoweredFunc& func) -> std::string {
      const std::string output = OutputBufferAt(func, *hook_output);
      return !output.empty() && MarksReady(func.body, output) ? output : "";
    };
  }
  KernelObject object =
      BuildKernelObject(task.tmpl(), task.workload(), kernel.choice.config, target, options);
  if (!object.ok()) {
    return absl::Status(
        object.status().code(),
        absl::StrCat("kernel ", symbol, " (", task.name(), " for ", task.workload().Describe(),
                     ", config ", kernel.choice.config.ToString(), "): ", object.error_msg));
  }
  *hooked = !object.epilogue_buffer.empty();
  *stored = object.epilogue_in_stores;
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
  const std::vector<KernelBuild> builds =
      KernelBuilds(&built, options.epilogues_in_stores, options.exp_epilogues_in_stores);
  const int64_t hook_min_bytes = EpilogueHookMinBytes(options);
  for (const auto& [kernel, symbol, in_stores] : builds) {
    const std::optional<int> hook_output = hook_min_bytes == kNoEpilogueHook
                                               ? std::nullopt
                                               : HookOutput(built.plan, symbol, hook_min_bytes);
    bool hooked = false, stored = false;
    TF_ASSIGN_OR_RETURN(std::string object,
                        CompileKernel(*kernel, symbol, target, options.opt_level, hook_output,
                                      in_stores, &hooked, &stored, exported));
    members.push_back({absl::StrCat(symbol, ".o"), std::move(object)});
    for (PlanStep& step : built.plan.steps) {
      if (step.op == StepOp::kKernel && step.symbol == symbol && !step.epilogue.empty()) {
        step.epilogue.in_kernel = hooked;
        step.epilogue.in_stores = stored;
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
  report.kernels = static_cast<int>(builds.size());
  report.seconds = SecondsSince(start);
  return report;
}

}  // namespace tunefleet
