// The runtime of a compiled model (what `tunefleet compile` writes): opens
// the model library, checks it was built for this machine, reads its plan
// (plan.h) and runs it on a thread pool that implements TfRuntime.
//
//   TF_ASSIGN_OR_RETURN(std::unique_ptr<CompiledModel> model, CompiledModel::Open("out/"));
//   model->SetThreads(2);
//   TF_RETURN_IF_ERROR(model->Run({input.data()}, {output.data()}));
//
// The C API (tunefleet_model.h) wraps this class. A CompiledModel is used by
// one thread at a time (Run reuses its activation buffers). Activations live
// in one arena: buffers whose lifetimes (first to last step that touches
// them) do not overlap share memory, so the arena holds about the largest
// set of tensors alive at once rather than every tensor of the model.
#ifndef TUNEFLEET_COMPILER_RUNTIME_MODEL_RUNTIME_H_
#define TUNEFLEET_COMPILER_RUNTIME_MODEL_RUNTIME_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/kernel_abi.h"
#include "compiler/runtime/ops.h"
#include "compiler/runtime/plan.h"

namespace tunefleet {

class ThreadPool;

// The model library inside a compile output directory.
inline constexpr char kModelLibraryName[] = "model.so";

// One symbol of a model linked into the program (as tunefleet_model.h's
// TfModelSymbol): its name in model.so and its address.
struct LinkedSymbol {
  const char* name;
  const void* address;
};

class CompiledModel {
 public:
  // `path`: an output directory of `tunefleet compile` or its model.so.
  // NotFound for a missing file, FailedPrecondition for a library built for
  // another architecture or for CPU features this machine lacks (naming
  // them), InvalidArgument for a library that is not a TuneFleet model.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<CompiledModel>> Open(const std::string& path);
  // A model linked into this program from the static archive `tunefleet
  // compile` writes (libmodel.a): `symbols` lists what model.so would
  // export, ending with {nullptr, nullptr}. Errors as Open's.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<CompiledModel>> OpenLinked(
      const LinkedSymbol* symbols);
  ~CompiledModel();

  const ModelPlan& plan() const { return plan_; }
  const std::vector<PlanTensor>& inputs() const { return plan_.inputs; }
  const std::vector<PlanTensor>& outputs() const { return plan_.outputs; }
  int num_threads() const;
  // Threads that run the kernels' parallel loops (>= 1, the caller counted).
  void SetThreads(int num_threads);

  // One inference: one pointer per input and per output, in plan order, each
  // holding the tensor's elements: an input's of its PlanTensor::type
  // (float, int32_t, int64_t), an output's floats. InvalidArgument for a
  // wrong count, a null pointer or an integer input beyond +-2^24 (naming
  // the tensor), or a run-time index out of range (naming the node);
  // Internal when a kernel fails.
  [[nodiscard]] absl::Status Run(const std::vector<const void*>& inputs,
                                 const std::vector<float*>& outputs);

  // Per-step wall time: when on, each Run adds every step's seconds to
  // step_seconds() (by plan step index), for finding where the time goes.
  void SetProfiling(bool on);
  const std::vector<double>& step_seconds() const { return step_seconds_; }
  // Of step_seconds(), what kernel steps spent in their epilogue (bias,
  // residual, activation: a pass over the output after the kernel).
  const std::vector<double>& epilogue_seconds() const { return epilogue_seconds_; }
  // The kernels' own times as the tuner's time evaluator takes them: each
  // kernel step called `calls` times back to back on its buffers (after one
  // warm-up call; without its epilogue), seconds per call by plan step index
  // (0 for other steps). What the model costs beyond their sum is the price
  // of running them as one model (epilogues, other steps, cold caches,
  // barriers). The kernels overwrite their outputs, so a Run must follow
  // before outputs are read again. Internal when a kernel fails.
  // With `cold_weights`, every call is timed alone after the constants it
  // reads (weights, bias, a packed layout's) are flushed from every cache
  // level, its activations left as the warm-up call left them: in a model
  // each layer's weights come from memory once the model's weights outgrow
  // the caches, while its input is what the step before just wrote.
  [[nodiscard]] absl::StatusOr<std::vector<double>> KernelSecondsAlone(int calls,
                                                                       bool cold_weights = false);
  // Floats of the activation arena (for reports and tests).
  int64_t arena_floats() const { return arena_floats_; }

 private:
  struct KernelStep {
    TfKernelEntry entry = nullptr;
    TfKernelEntry prepare = nullptr;
    TfKernelEntry finish = nullptr;
    std::vector<float*> staged;  // owned by staged_memory_
    // The epilogue the kernel applies through its hook (plan: in_kernel).
    std::optional<BoundEpilogue> epilogue;
  };

  CompiledModel() = default;
  [[nodiscard]] absl::Status Bind();
  [[nodiscard]] absl::Status Load(const std::string& library);
  // Calls kernel step i's entries (prepare, entry, finish as its plan says),
  // with its epilogue hook or without; `args` is scratch.
  [[nodiscard]] absl::Status RunKernel(size_t i, bool with_epilogue_hook, const TfRuntime* rt,
                                       std::vector<void*>& args) const;
  // Writes back and drops from every cache level the constants kernel step
  // i reads.
  void FlushKernelWeights(size_t i) const;
  // dlsym in model.so, or a lookup in the linked model's table.
  void* Symbol(const std::string& name) const;

  void* library_ = nullptr;
  const LinkedSymbol* linked_ = nullptr;  // OpenLinked's table
  ModelPlan plan_;
  const float* weights_ = nullptr;
  std::vector<float*> buffers_;  // by plan buffer id
  std::vector<std::unique_ptr<float, void (*)(void*)>> memory_;
  int64_t arena_floats_ = 0;
  bool profiling_ = false;
  std::vector<double> step_seconds_;
  std::vector<double> epilogue_seconds_;
  std::vector<KernelStep> kernels_;  // by step index (empty entry for other ops)
  std::unique_ptr<ThreadPool> pool_;
};

// The x86 features of `required` missing from /proc/cpuinfo's flags line
// `cpu_flags` ("fpu vme ... avx2 ..."). For the CPU check; exposed for tests.
std::vector<std::string> MissingCpuFeatures(const std::vector<std::string>& required,
                                            const std::string& cpu_flags);

// Float offsets into one arena for the plan's activation buffers (-1 for
// constants) such that buffers alive during a common step never overlap;
// *arena_floats gets the arena's size. Each offset is a multiple of 16
// floats (64 bytes). An alias (PlanBuffer::alias_of) lies at its offset
// within its root, which stays alive as long as any of its aliases.
// Exposed for tests.
std::vector<int64_t> PlanArena(const ModelPlan& plan, int64_t* arena_floats);

}  // namespace tunefleet

#endif  // TUNEFLEET_COMPILER_RUNTIME_MODEL_RUNTIME_H_
