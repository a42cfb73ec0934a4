// The binary interface between a compiled CPU kernel (a shared object made by
// toolchain/) and whoever loads it (kernel_runtime/'s runner). Plain C so the
// layout is fixed and both sides agree without sharing any C++ code.
//
// A kernel exports one entry point:
//
//   int32_t <entry>(void** args, const TfRuntime* runtime);
//
// `args` holds one pointer per tensor argument, inputs first, then outputs,
// in the order of the workload's ArgSpecs(). The kernel owns no threads: every
// parallel loop calls runtime->parallel_for, which runs body(i, closure) for
// each i in [0, n) on the loader's thread pool and returns when all are done.
// Large scratch buffers (packed operands) come from runtime->alloc_workspace.
// The entry returns 0 on success, non-zero if a workspace allocation failed.
//
// Staged kernels. A kernel whose layout transforms are not part of what is
// timed (a network compiled end to end in a blocked layout packs its weights
// once at compile time and passes activations along already blocked) also
// exports
//
//   const int64_t <entry>_staged_elements[];  // fp32 counts, ended by -1
//   int32_t <entry>_prepare(void** args, const TfRuntime* runtime);
//   int32_t <entry>_finish(void** args, const TfRuntime* runtime);
//
// and then every call gets, after the tensor pointers, one pointer per staged
// buffer (64-byte aligned, owned by the loader, alive across the calls).
// The loader calls prepare once (inputs -> staged buffers), then the entry as
// often as it times it (staged buffers -> staged buffers or outputs), then
// finish once (staged buffers -> outputs) before checking the outputs. Only
// the entry is timed. prepare and finish are each optional.
#ifndef TUNEFLEET_COMMON_KERNEL_ABI_H_
#define TUNEFLEET_COMMON_KERNEL_ABI_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TF_KERNEL_ABI_VERSION 1

// Suffixes of a staged kernel's extra symbols.
#define TF_KERNEL_STAGED_ELEMENTS_SUFFIX "_staged_elements"
#define TF_KERNEL_PREPARE_SUFFIX "_prepare"
#define TF_KERNEL_FINISH_SUFFIX "_finish"

typedef void (*TfParallelBody)(int64_t index, void* closure);

typedef struct TfRuntime {
  int32_t abi_version;  // TF_KERNEL_ABI_VERSION
  int32_t num_threads;
  void* context;  // opaque, passed back to the callbacks below
  void (*parallel_for)(void* context, int64_t n, TfParallelBody body, void* closure);
  // Returns 64-byte aligned memory or NULL.
  void* (*alloc_workspace)(void* context, int64_t bytes);
  void (*free_workspace)(void* context, void* ptr);
} TfRuntime;

typedef int32_t (*TfKernelEntry)(void** args, const TfRuntime* runtime);

// Epilogue hooks. A kernel compiled into a model with its epilogue fused
// (y = act(y + bias + residual) on its output) takes one more pointer after
// its staged buffers: a TfEpilogue, or NULL for none. Wherever its timed
// body has written a region of the output for the last time (rows runs of
// cols floats, the first at element `offset`, each row_stride after the
// previous), it calls apply on that region while it is still in cache.
// Kernels built for measurement never call it.
typedef struct TfEpilogue {
  void (*apply)(const struct TfEpilogue* self, int64_t offset, int64_t rows, int64_t cols,
                int64_t row_stride);
} TfEpilogue;

// Field indices of TfRuntime, for code generators that address it as a struct
// {i32, i32, ptr, ptr, ptr, ptr}.
#define TF_RUNTIME_FIELD_CONTEXT 2
#define TF_RUNTIME_FIELD_PARALLEL_FOR 3
#define TF_RUNTIME_FIELD_ALLOC_WORKSPACE 4
#define TF_RUNTIME_FIELD_FREE_WORKSPACE 5

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // TUNEFLEET_COMMON_KERNEL_ABI_H_
