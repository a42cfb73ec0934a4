#include "compiler/runtime/model_runtime.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/file_util.h"
#include "common/saturating_product.h"
#include "common/status_macros.h"
#include "compiler/runtime/ops.h"
#include "kernel_runtime/thread_pool.h"
#include "target/arch_registry.h"
#include "target/host.h"

namespace tunefleet {
namespace {

// "x86_64" for 62: the architecture a library was built for, by its e_machine.
std::string MachineName(uint16_t machine) {
  for (const Arch* arch : AllArchs()) {
    if (arch->elf_machine() == machine) return std::string(arch->name());
  }
  return absl::StrCat("ELF machine ", machine);
}

// NotFound / InvalidArgument / FailedPrecondition for a file dlopen must not see.
[[nodiscard]] absl::Status CheckElf(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("model library ", path, " does not exist"));
  unsigned char header[20] = {};
  in.read(reinterpret_cast<char*>(header), sizeof(header));
  if (in.gcount() != sizeof(header) || std::memcmp(header,
                                                   "\x7f"
                                                   "ELF",
                                                   4) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, " is not a shared library (no ELF header)"));
  }
  const uint16_t machine = static_cast<uint16_t>(header[18] | (header[19] << 8));
  const Arch* host = HostArch();
  if (host == nullptr || machine != host->elf_machine()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "model library ", path, " was built for ", MachineName(machine), "; this machine is ",
        host == nullptr ? "not a described architecture" : host->name(),
        " (compile it with a target for this CPU)"));
  }
  return absl::OkStatus();
}

void FreeAligned(void* p) { std::free(p); }

int64_t AlignFloats(int64_t n) { return (std::max<int64_t>(n, 1) + 15) / 16 * 16; }

}  // namespace

std::vector<int64_t> PlanArena(const ModelPlan& plan, int64_t* arena_floats) {
  const int num_buffers = static_cast<int>(plan.buffers.size());
  const int end = static_cast<int>(plan.steps.size());
  // Lifetime of each activation: [first, last] step touching it; inputs
  // are written before step 0, outputs read after the last step.
  std::vector<int> first(num_buffers, end + 1), last(num_buffers, -2);
  // An alias (a concatenation's input written in place) lives as part of
  // its root: the root is alive while any of them is.
  auto touch = [&](int id, int step) {
    if (id < 0) return;
    if (plan.buffers[id].alias_of >= 0) id = plan.buffers[id].alias_of;
    first[id] = std::min(first[id], step);
    last[id] = std::max(last[id], step);
  };
  for (const PlanTensor& t : plan.inputs) touch(t.buffer, -1);
  for (const PlanTensor& t : plan.outputs) touch(t.buffer, end);
  for (int i = 0; i < end; ++i) {
    const PlanStep& step = plan.steps[i];
    for (const std::vector<int>* ids : {&step.inputs, &step.outputs, &step.staged}) {
      for (int id : *ids) touch(id, i);
    }
    touch(step.epilogue.bias, i);
    touch(step.epilogue.residual, i);
  }
  // Largest first, each at the lowest offset clear of every placed buffer
  // whose lifetime meets its own.
  std::vector<int> order;
  for (int id = 0; id < num_buffers; ++id) {
    if (!plan.buffers[id].is_constant() && plan.buffers[id].alias_of < 0) order.push_back(id);
  }
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return plan.buffers[a].elements > plan.buffers[b].elements;
  });
  std::vector<int64_t> offsets(num_buffers, -1);
  std::vector<int> placed;
  *arena_floats = 0;
  for (int id : order) {
    if (first[id] > last[id]) first[id] = last[id] = -3;  // unused: alive alone
    std::vector<std::pair<int64_t, int64_t>> taken;       // [begin, end) of overlapping lives
    for (int other : placed) {
      if (first[other] <= last[id] && first[id] <= last[other]) {
        taken.push_back(
            {offsets[other], offsets[other] + AlignFloats(plan.buffers[other].elements)});
      }
    }
    std::sort(taken.begin(), taken.end());
    const int64_t size = AlignFloats(plan.buffers[id].elements);
    int64_t offset = 0;
    for (const auto& [begin, stop] : taken) {
      if (offset + size <= begin) break;
      offset = std::max(offset, stop);
    }
    offsets[id] = offset;
    placed.push_back(id);
    *arena_floats = std::max(*arena_floats, offset + size);
  }
  for (int id = 0; id < num_buffers; ++id) {
    const PlanBuffer& b = plan.buffers[id];
    if (b.alias_of >= 0) offsets[id] = offsets[b.alias_of] + b.alias_offset;
  }
  return offsets;
}

std::vector<std::string> MissingCpuFeatures(const std::vector<std::string>& required,
                                            const std::string& cpu_flags) {
  std::set<std::string> have;
  for (absl::string_view flag : absl::StrSplit(cpu_flags, absl::ByAnyChar(" \t:"))) {
    if (!flag.empty()) have.insert(std::string(flag));
  }
  std::vector<std::string> missing;
  for (const std::string& feature : required) {
    if (!have.count(feature)) missing.push_back(feature);
  }
  return missing;
}

[[nodiscard]] absl::StatusOr<std::unique_ptr<CompiledModel>> CompiledModel::Open(
    const std::string& path) {
  std::string library = path;
  struct stat st;
  if (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    library = absl::StrCat(path, "/", kModelLibraryName);
  }
  TF_RETURN_IF_ERROR(CheckElf(library));
  std::unique_ptr<CompiledModel> model(new CompiledModel());
  // A path without '/' would make dlopen search the library path instead.
  const std::string dl_path = library.find('/') == std::string::npos ? "./" + library : library;
  model->library_ = dlopen(dl_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (model->library_ == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot load model library ", library, ": ", dlerror()));
  }
  TF_RETURN_IF_ERROR(model->Load(library));
  return model;
}

[[nodiscard]] absl::StatusOr<std::unique_ptr<CompiledModel>> CompiledModel::OpenLinked(
    const LinkedSymbol* symbols) {
  if (symbols == nullptr) return absl::InvalidArgumentError("no linked model (null symbol table)");
  std::unique_ptr<CompiledModel> model(new CompiledModel());
  model->linked_ = symbols;
  TF_RETURN_IF_ERROR(model->Load("linked into this program"));
  return model;
}

void* CompiledModel::Symbol(const std::string& name) const {
  if (library_ != nullptr) return dlsym(library_, name.c_str());
  for (const LinkedSymbol* s = linked_; s != nullptr && s->name != nullptr; ++s) {
    if (name == s->name) return const_cast<void*>(s->address);
  }
  return nullptr;
}

// What Open and OpenLinked share once the model's symbols can be found.
[[nodiscard]] absl::Status CompiledModel::Load(const std::string& library) {
  const char* plan_text = static_cast<const char*>(Symbol(kPlanSymbol));
  weights_ = static_cast<const float*>(Symbol(kWeightsSymbol));
  if (plan_text == nullptr || weights_ == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        library, " is not a TuneFleet model library (no ", kPlanSymbol, "/", kWeightsSymbol, ")"));
  }
  TF_ASSIGN_OR_RETURN(plan_, ModelPlan::FromJson(plan_text));
  const std::vector<std::string> missing =
      MissingCpuFeatures(plan_.required_features, HostCpuFeatures());
  if (!missing.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "model library ", library, " was built for '", plan_.target,
        "', whose kernels use CPU features this machine lacks: ", absl::StrJoin(missing, ", ")));
  }
  TF_RETURN_IF_ERROR(Bind());
  SetThreads(1);
  return absl::OkStatus();
}

CompiledModel::~CompiledModel() {
  pool_.reset();
  if (library_ != nullptr) dlclose(library_);
}

[[nodiscard]] absl::Status CompiledModel::Bind() {
  auto allocate = [this](int64_t elements) -> float* {
    const size_t bytes = ((std::max<int64_t>(elements, 1) * sizeof(float) + 63) / 64) * 64;
    float* p = static_cast<float*>(std::aligned_alloc(64, bytes));
    if (p != nullptr) {
      std::memset(p, 0, bytes);
      memory_.emplace_back(p, &FreeAligned);
    }
    return p;
  };
  const std::vector<int64_t> offsets = PlanArena(plan_, &arena_floats_);
  float* arena = allocate(arena_floats_);
  if (arena == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot allocate the activation arena of ", arena_floats_, " floats"));
  }
  for (size_t id = 0; id < plan_.buffers.size(); ++id) {
    const PlanBuffer& buffer = plan_.buffers[id];
    if (buffer.is_constant()) {
      if (buffer.constant_offset + buffer.elements > plan_.weight_floats) {
        return absl::InvalidArgumentError(
            absl::StrCat("model plan: constant '", buffer.tensor, "' lies outside the weights"));
      }
      buffers_.push_back(const_cast<float*>(weights_ + buffer.constant_offset));
    } else {
      buffers_.push_back(arena + offsets[id]);
    }
  }
  kernels_.resize(plan_.steps.size());
  for (size_t i = 0; i < plan_.steps.size(); ++i) {
    const PlanStep& step = plan_.steps[i];
    if (step.op == StepOp::kChannelBinary) {
      const bool fits =
          step.inputs.size() == 2 && step.outputs.size() == 1 && step.in_shape.size() == 2 &&
          plan_.buffers[step.inputs[0]].is_4d() &&
          plan_.buffers[step.outputs[0]].shape == plan_.buffers[step.inputs[0]].shape &&
          plan_.buffers[step.outputs[0]].block == plan_.buffers[step.inputs[0]].block &&
          plan_.buffers[step.outputs[0]].RowWidth() == plan_.buffers[step.inputs[0]].RowWidth() &&
          step.in_shape[1] == plan_.buffers[step.inputs[0]].shape[1] &&
          plan_.buffers[step.inputs[1]].elements >= step.in_shape[0] * step.in_shape[1] &&
          (step.in_shape[0] == 1 || step.in_shape[0] == plan_.buffers[step.inputs[0]].shape[0]);
      if (!fits) {
        return absl::InvalidArgumentError(absl::StrCat(
            "model plan: step '", step.node, "' (channel_binary) has buffers that do not fit"));
      }
    }
    if (step.op == StepOp::kSoftmax && step.inputs.size() > 1) {
      // softmax(x + bias): a bias read through b_strides within its buffer,
      // rows of out_shape's last axis covering x.
      const int64_t rank = static_cast<int64_t>(step.out_shape.size());
      bool fits = step.inputs.size() == 2 && step.outputs.size() == 1 && rank > 0 &&
                  step.in_shape.size() == 3 && step.in_shape[2] == 1 &&
                  step.b_strides.size() == step.out_shape.size() &&
                  step.out_shape.back() == step.in_shape[1] &&
                  SaturatingProduct(step.out_shape) == SaturatingProduct(step.in_shape) &&
                  plan_.buffers[step.inputs[0]].elements >= SaturatingProduct(step.in_shape);
      int64_t reach = 0;
      for (int64_t d = 0; fits && d < rank; ++d) {
        int64_t term = 0;
        fits = step.out_shape[d] > 0 && step.b_strides[d] >= 0 &&
               !__builtin_mul_overflow(step.out_shape[d] - 1, step.b_strides[d], &term) &&
               !__builtin_add_overflow(reach, term, &reach);
      }
      if (!fits || reach >= plan_.buffers[step.inputs[1]].elements) {
        return absl::InvalidArgumentError(absl::StrCat(
            "model plan: step '", step.node, "' (softmax of a sum) has buffers that do not fit"));
      }
    }
    if (step.op == StepOp::kScaleWeights) {
      const int64_t floats = SaturatingProduct(step.in_shape);
      const bool fits = step.inputs.size() == 2 && step.outputs.size() == 1 &&
                        step.in_shape.size() == 5 && floats > 0 &&
                        plan_.buffers[step.inputs[0]].elements == floats &&
                        plan_.buffers[step.outputs[0]].elements == floats &&
                        plan_.buffers[step.inputs[1]].elements >=
                            SaturatingProduct({step.in_shape[1], step.in_shape[3]});
      if (!fits) {
        return absl::InvalidArgumentError(absl::StrCat(
            "model plan: step '", step.node, "' (scale_weights) has buffers that do not fit"));
      }
    }
    if (step.op == StepOp::kChannelGather) {
      const PlanBuffer& from = plan_.buffers[step.inputs[0]];
      const PlanBuffer& to = plan_.buffers[step.outputs[0]];
      if (!from.is_4d() || !to.is_4d() || step.in_shape != from.shape ||
          step.out_shape != to.shape) {
        return absl::InvalidArgumentError(absl::StrCat(
            "model plan: step '", step.node, "' (channel_gather) has buffers that do not fit"));
      }
    }
    const bool relayout = step.op == StepOp::kRelayout;
    const bool global_pool = step.op == StepOp::kGlobalAvgPool;
    if (relayout || global_pool || step.op == StepOp::kMaxPool || step.op == StepOp::kAvgPool) {
      const PlanBuffer& from = plan_.buffers[step.inputs.empty() ? 0 : step.inputs[0]];
      const PlanBuffer& to = plan_.buffers[step.outputs.empty() ? 0 : step.outputs[0]];
      const bool pooled_block_kept = relayout || global_pool || from.block == to.block;
      if (step.inputs.empty() || step.outputs.empty() || !from.is_4d() || !to.is_4d() ||
          (relayout && from.shape != to.shape) ||
          (!relayout && (step.in_shape != from.shape || step.out_shape != to.shape)) ||
          !pooled_block_kept || (global_pool && !to.is_plain())) {
        return absl::InvalidArgumentError(absl::StrCat("model plan: step '", step.node, "' (",
                                                       StepOpName(step.op),
                                                       ") has buffers of the wrong layout"));
      }
    }
    if (step.outputs.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("model plan: step '", step.node, "' writes no buffer"));
    }
    if (step.op != StepOp::kKernel) continue;
    KernelStep& k = kernels_[i];
    k.entry = reinterpret_cast<TfKernelEntry>(Symbol(step.symbol));
    if (k.entry == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("model library has no kernel '", step.symbol, "' (step '", step.node, "')"));
    }
    k.prepare = reinterpret_cast<TfKernelEntry>(Symbol(step.symbol + TF_KERNEL_PREPARE_SUFFIX));
    k.finish = reinterpret_cast<TfKernelEntry>(Symbol(step.symbol + TF_KERNEL_FINISH_SUFFIX));
    const PlanEpilogue& e = step.epilogue;
    if (e.in_kernel && !e.empty()) {
      k.epilogue = BindEpilogue(e, e.bias >= 0 ? buffers_[e.bias] : nullptr,
                                e.residual >= 0 ? buffers_[e.residual] : nullptr,
                                buffers_[step.outputs[0]], plan_.buffers[step.outputs[0]].elements);
    }
    const auto* staged =
        static_cast<const int64_t*>(Symbol(step.symbol + TF_KERNEL_STAGED_ELEMENTS_SUFFIX));
    if (!step.staged.empty()) {
      // The plan passes its own buffers; they must be as large as the kernel reads.
      size_t i = 0;
      for (; staged != nullptr && staged[i] >= 0; ++i) {
        if (i >= step.staged.size() || plan_.buffers[step.staged[i]].elements < staged[i]) {
          return absl::InvalidArgumentError(absl::StrCat("model plan: step '", step.node,
                                                         "' passes staged buffers that do not "
                                                         "fit kernel ",
                                                         step.symbol));
        }
      }
      if (i != step.staged.size()) {
        return absl::InvalidArgumentError(
            absl::StrCat("model plan: step '", step.node, "' passes ", step.staged.size(),
                         " staged buffers; kernel ", step.symbol, " takes ", i));
      }
      continue;
    }
    for (; staged != nullptr && *staged >= 0; ++staged) {
      float* p = allocate(*staged);
      if (p == nullptr) return absl::ResourceExhaustedError("cannot allocate a staged buffer");
      k.staged.push_back(p);
    }
  }
  return absl::OkStatus();
}

void CompiledModel::SetProfiling(bool on) {
  profiling_ = on;
  step_seconds_.assign(plan_.steps.size(), 0.0);
  epilogue_seconds_.assign(plan_.steps.size(), 0.0);
}

int CompiledModel::num_threads() const { return pool_->num_threads(); }

void CompiledModel::SetThreads(int num_threads) {
  if (pool_ && pool_->num_threads() == std::max(num_threads, 1)) return;
  pool_.reset();
  // A library runs inside the user's process: never pin its threads.
  pool_ = std::make_unique<ThreadPool>(
      ThreadPoolOptions{.num_threads = std::max(num_threads, 1), .pin_threads = false});
}

namespace {

// Copies `n` values of an integer input into its fp32 buffer; refuses a
// value fp32 does not hold exactly.
template <typename Int>
[[nodiscard]] absl::Status IntegersIn(const PlanTensor& t, const void* from, int64_t n, float* to) {
  constexpr int64_t kExact = int64_t{1} << 24;
  const Int* v = static_cast<const Int*>(from);
  for (int64_t i = 0; i < n; ++i) {
    if (v[i] > kExact || v[i] < -kExact) {
      return absl::InvalidArgumentError(absl::StrCat("input '", t.name, "' holds ", v[i], " at ", i,
                                                     ": beyond +-2^24, which the model's ",
                                                     ElementTypeName(t.type), " inputs take"));
    }
    to[i] = static_cast<float>(v[i]);
  }
  return absl::OkStatus();
}

// A gather's run-time indices (step inputs[1], whole numbers from an
// integer input) inside its axis.
[[nodiscard]] absl::Status CheckGatherIndices(const PlanStep& step, const float* indices,
                                              int64_t out_elements) {
  const int64_t n = step.in_shape[1];
  const int64_t count = out_elements / std::max<int64_t>(step.in_shape[0] * step.in_shape[2], 1);
  for (int64_t i = 0; i < count; ++i) {
    if (indices[i] < -n || indices[i] >= n) {
      return absl::InvalidArgumentError(absl::StrCat("node '", step.node, "': index ", indices[i],
                                                     " is outside [", -n, ", ", n, ")"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CompiledModel::RunKernel(size_t i, bool with_epilogue_hook, const TfRuntime* rt,
                                      std::vector<void*>& args) const {
  const PlanStep& step = plan_.steps[i];
  const KernelStep& k = kernels_[i];
  args.clear();
  for (int id : step.inputs) args.push_back(buffers_[id]);
  for (int id : step.outputs) args.push_back(buffers_[id]);
  for (float* s : k.staged) args.push_back(s);
  for (int id : step.staged) args.push_back(buffers_[id]);
  // A kernel built with an epilogue hook reads one more pointer (NULL:
  // none); one built without ignores it.
  args.push_back(with_epilogue_hook && k.epilogue ? const_cast<TfEpilogue*>(&k.epilogue->hook)
                                                  : nullptr);
  // One computing its epilogue in its stores then reads the bias and the
  // residual it was built with (always: the epilogue is part of its code).
  const PlanEpilogue& e = step.epilogue;
  if (e.in_stores) {
    if (e.bias >= 0) args.push_back(buffers_[e.bias]);
    if (e.residual >= 0) args.push_back(buffers_[e.residual]);
  }
  const bool plan_staged = !step.staged.empty();
  for (TfKernelEntry fn : {k.prepare, k.entry, k.finish}) {
    if (fn == nullptr || (plan_staged && fn != k.entry)) continue;
    if (fn(args.data(), rt) != 0) {
      return absl::InternalError(
          absl::StrCat("kernel of node '", step.node, "' failed (workspace allocation)"));
    }
  }
  return absl::OkStatus();
}

void CompiledModel::FlushKernelWeights(size_t i) const {
  const PlanStep& step = plan_.steps[i];
  std::vector<CacheFlushRange> ranges;
  auto add = [&](int id) {
    const PlanBuffer& b = plan_.buffers[static_cast<size_t>(id)];
    if (b.is_constant() && b.elements > 0) {
      ranges.push_back({buffers_[id], static_cast<size_t>(b.elements) * sizeof(float)});
    }
  };
  for (int id : step.inputs) add(id);
  for (int id : step.staged) add(id);
  if (step.epilogue.bias >= 0) add(step.epilogue.bias);
  if (step.epilogue.residual >= 0) add(step.epilogue.residual);
  FlushCacheLines(ranges);
}

absl::StatusOr<std::vector<double>> CompiledModel::KernelSecondsAlone(int calls,
                                                                      bool cold_weights) {
  std::vector<double> seconds(plan_.steps.size(), 0.0);
  const TfRuntime* rt = pool_->runtime();
  std::vector<void*> args;
  for (size_t i = 0; i < plan_.steps.size(); ++i) {
    if (plan_.steps[i].op != StepOp::kKernel) continue;
    // One call first, as the time evaluator's warm-up: the kernel's weights
    // and buffers in cache, its pages touched.
    TF_RETURN_IF_ERROR(RunKernel(i, /*with_epilogue_hook=*/false, rt, args));
    // Cold weights: each call timed alone after the flush, which is not timed.
    const int timed_calls = std::max(calls, 1);
    const int rounds = cold_weights ? timed_calls : 1;
    double total = 0;
    for (int r = 0; r < rounds; ++r) {
      if (cold_weights) FlushKernelWeights(i);
      const auto start = std::chrono::steady_clock::now();
      for (int c = 0; c < timed_calls / rounds; ++c) {
        TF_RETURN_IF_ERROR(RunKernel(i, /*with_epilogue_hook=*/false, rt, args));
      }
      total += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    seconds[i] = total / timed_calls;
  }
  return seconds;
}

[[nodiscard]] absl::Status CompiledModel::Run(const std::vector<const void*>& inputs,
                                              const std::vector<float*>& outputs) {
  if (inputs.size() != plan_.inputs.size() || outputs.size() != plan_.outputs.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the model takes ", plan_.inputs.size(), " inputs and ", plan_.outputs.size(),
                     " outputs; got ", inputs.size(), " and ", outputs.size()));
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i] == nullptr && plan_.buffers[plan_.inputs[i].buffer].elements > 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("input '", plan_.inputs[i].name, "' is a null buffer"));
    }
    const PlanTensor& t = plan_.inputs[i];
    const PlanBuffer& b = plan_.buffers[t.buffer];
    if (b.elements == 0) continue;
    float* to = buffers_[t.buffer];
    if (t.type == ElementType::kInt64) {
      TF_RETURN_IF_ERROR(IntegersIn<int64_t>(t, inputs[i], b.elements, to));
    } else if (t.type == ElementType::kInt32) {
      TF_RETURN_IF_ERROR(IntegersIn<int32_t>(t, inputs[i], b.elements, to));
    } else {
      std::memcpy(to, inputs[i], b.elements * sizeof(float));
    }
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (outputs[i] == nullptr && plan_.buffers[plan_.outputs[i].buffer].elements > 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("output '", plan_.outputs[i].name, "' is a null buffer"));
    }
  }
  const TfRuntime* rt = pool_->runtime();
  std::vector<void*> args;
  for (size_t i = 0; i < plan_.steps.size(); ++i) {
    const PlanStep& step = plan_.steps[i];
    const auto step_start =
        profiling_ ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
    auto in = [&](size_t k) { return buffers_[step.inputs[k]]; };
    float* out = buffers_[step.outputs[0]];
    const int64_t out_elements = plan_.buffers[step.outputs[0]].elements;
    if (step.op == StepOp::kKernel) {
      const KernelStep& k = kernels_[i];
      TF_RETURN_IF_ERROR(RunKernel(i, /*with_epilogue_hook=*/true, rt, args));
      if (!step.epilogue.empty() && !step.epilogue.in_stores && !k.epilogue) {
        const auto epilogue_start =
            profiling_ ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
        const PlanEpilogue& e = step.epilogue;
        ApplyEpilogue(e, e.bias >= 0 ? buffers_[e.bias] : nullptr,
                      e.residual >= 0 ? buffers_[e.residual] : nullptr, out, out_elements, rt);
        if (profiling_) {
          epilogue_seconds_[i] +=
              std::chrono::duration<double>(std::chrono::steady_clock::now() - epilogue_start)
                  .count();
        }
      }
    } else if (step.op == StepOp::kMaxPool || step.op == StepOp::kAvgPool ||
               step.op == StepOp::kGlobalAvgPool) {
      Pool(step, plan_.buffers[step.inputs[0]], in(0), plan_.buffers[step.outputs[0]], out, rt);
    } else if (step.op == StepOp::kRelayout) {
      Relayout(plan_.buffers[step.inputs[0]], in(0), plan_.buffers[step.outputs[0]], out, rt);
    } else if (step.op == StepOp::kChannelGather) {
      ChannelGather(step, plan_.buffers[step.inputs[0]], in(0), plan_.buffers[step.outputs[0]], out,
                    rt);
    } else if (step.op == StepOp::kChannelBinary) {
      ChannelBinary(step, plan_.buffers[step.inputs[0]], in(0), in(1), out, rt);
    } else if (step.op == StepOp::kScaleWeights) {
      ScaleWeights(step, in(0), in(1), out, rt);
    } else if (step.op == StepOp::kBatchNorm) {
      std::vector<const float*> operands;
      for (int id : step.inputs) operands.push_back(buffers_[id]);
      BatchNorm(step, plan_.buffers[step.inputs[0]], operands, out, rt);
    } else if (step.op == StepOp::kSoftmax) {
      Softmax(step, in(0), step.inputs.size() > 1 ? in(1) : nullptr, out, rt);
    } else if (step.op == StepOp::kAdd || step.op == StepOp::kPointwise ||
               step.op == StepOp::kCopy) {
      Elementwise(step, in(0), step.inputs.size() > 1 ? in(1) : nullptr, out, out_elements, rt);
    } else if (IsTensorOp(step.op)) {
      std::vector<const float*> operands;
      for (int id : step.inputs) operands.push_back(buffers_[id]);
      if (step.op == StepOp::kGather && operands.size() == 2) {
        TF_RETURN_IF_ERROR(CheckGatherIndices(step, operands[1], out_elements));
      }
      std::vector<float*> more_outputs;
      for (size_t o = 1; o < step.outputs.size(); ++o) {
        more_outputs.push_back(buffers_[step.outputs[o]]);
      }
      RunTensorOp(step, operands, out, out_elements, rt, more_outputs);
    } else {
      return absl::InvalidArgumentError(absl::StrCat("model plan: step '", step.node, "' has op '",
                                                     StepOpName(step.op),
                                                     "' the runtime cannot run"));
    }
    if (profiling_) {
      step_seconds_[i] +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - step_start).count();
    }
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    const PlanBuffer& b = plan_.buffers[plan_.outputs[i].buffer];
    if (b.elements > 0) {
      std::memcpy(outputs[i], buffers_[plan_.outputs[i].buffer], b.elements * sizeof(float));
    }
  }
  return absl::OkStatus();
}

}  // namespace tunefleet
