// `tunefleet compile`: an ONNX model and tuning records to a directory
// holding model.so, a shared library that runs the whole model through the
// runtime's C API (compiler/runtime/tunefleet_model.h).
//
//   CompileOptions options{.model = "resnet18.onnx", .records = "r.jsonl",
//                          .target = "llvm -mcpu=skylake-avx512", .output_dir = "out"};
//   TF_ASSIGN_OR_RETURN(CompileReport report, CompileModel(options));
//
// What model.so holds: one kernel per distinct (template, workload, config)
// compiled through the builder's pipeline (template -> Lower -> LLVM ->
// object) under its own symbol tf_kernel_<i>, the packed weights
// (tf_model_weights) and the plan (tf_model_plan, JSON), all linked with
// lld. It needs no C++ runtime of its own: the runtime library that opens
// it (libtunefleet_model.so, or the `tunefleet run` binary) executes the
// plan. x86-64 and AArch64 targets (an AArch64 model.so is cross-built
// here and needs no AArch64 sysroot: it is opened by an AArch64 build of
// the runtime, see examples/aarch64/). Beside it, libmodel.a holds the same
// objects and tf_model_open_linked() (model_archive.h), for programs that
// link the model in statically.
#ifndef TUNEFLEET_COMPILER_MODEL_COMPILER_H_
#define TUNEFLEET_COMPILER_MODEL_COMPILER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tuner_core/graph/onnx_import.h"

namespace tunefleet {

inline constexpr int64_t kNoEpilogueHook = -1;
inline constexpr int64_t kEpilogueHookAboveHostCache = -2;

struct CompileOptions {
  std::string model;    // an .onnx file
  std::string records;  // records file (JSON lines); empty: default configs everywhere
  std::string target;   // "llvm -mcpu=..."
  std::string output_dir;
  OnnxImportOptions onnx;
  int opt_level = 2;
  // Choose among each layer's near-best records so that fewer relayouts
  // are needed (layout_choice.h); false: every layer's best record.
  bool layout_aware = true;
  // Apply a kernel's epilogue from inside it, region by region as it
  // finishes them (its template's ir::OutputReady marks, the TfEpilogue
  // hook), instead of in a pass after it, for the kernels whose every
  // step's output holds at least this many bytes; kNoEpilogueHook: none,
  // 0: every kernel; kEpilogueHookAboveHostCache: the host's last-level
  // cache (target/cpuinfo.h) when `target` is the host, else none. On
  // outputs that stay in cache the pass is faster (on Zen 4 every kernel
  // hooked measured 1-5 % slower, bench/results/epilogue_hook_ab.*: the
  // calls' overhead on short rows costs more than the cache it saves); an
  // output larger than the last-level cache sends the pass to DRAM, and
  // there the hook wins (batch 8 on Zen 1, 8 MiB: MobileNet-v2 1.09x,
  // ResNet-18 1.05x, bench/results/epilogue_hook_llc_ab.*).
  int64_t epilogue_hook_min_bytes = kEpilogueHookAboveHostCache;
  // Compute a kernel's epilogue in its final stores, on the values still in
  // registers, wherever its template marks every store of the output
  // (tuner_core/ir/final_store.h) and the activation is one a store computes
  // (bias, residual, ReLU, Clip, LeakyRelu, HardSigmoid, HardSwish; not the
  // exp ones): no pass after the kernel and no hook. The others keep the
  // pass (or the hook, above).
  bool epilogues_in_stores = true;
  // With epilogues_in_stores, the exp activations too (Sigmoid, SiLU, Tanh,
  // GELU, Elu, Exp: ir::Exp, the code generator's). Off: on a Zen 3 they
  // measured 3-6 % slower in the stores than in the runtime's pass
  // (EfficientNet-B0 0.94x, BERT-tiny 0.97x, bench/results/
  // epilogue_stores_zen3.log): a register tile's dozen exps at once spill.
  bool exp_epilogues_in_stores = false;
};

struct CompileReport {
  std::string library;  // <output_dir>/model.so
  std::string archive;  // <output_dir>/libmodel.a (model_archive.h)
  int kernels = 0;      // distinct kernels compiled
  int tuned_layers = 0;
  int default_layers = 0;  // layers with no record: default config
  std::vector<std::string> warnings;
  // One line per tuned layer: "layer1.0.conv1: conv2d_nchwc.x86 from r.jsonl:12".
  std::vector<std::string> layers;
  // One line per layer the layout-aware choice moved off its best record.
  std::vector<std::string> layout_choices;
  double seconds = 0;
};

// Errors name what is wrong: an unsupported operator (node and op), a
// corrupt records line, records only for other targets, a built-in model
// name (no weights), a target neither x86-64 nor AArch64, a kernel that fails to compile.
[[nodiscard]] absl::StatusOr<CompileReport> CompileModel(const CompileOptions& options);

}  // namespace tunefleet

#endif  // TUNEFLEET_COMPILER_MODEL_COMPILER_H_
