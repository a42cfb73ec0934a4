// What the plan passes (alias_concats.h, alias_slices.h,
// fold_channel_scales.h) ask of a plan's buffers before they make one a view
// of another or drop it: how many steps write each (a kernel writes its
// outputs and the staged buffers it does not read), how many read each (as
// an input, a staged buffer or an epilogue's bias or residual), and which
// must stay where they are (the model's inputs and outputs), and which
// hold views of themselves; and how they drop the steps they made
// unnecessary.
//
//   const BufferUse use = BufferUseOf(*plan);
//   if (!use.pinned[id] && use.writers[id] == 1) ...
#ifndef TUNEFLEET_COMPILER_PASSES_BUFFER_USE_H_
#define TUNEFLEET_COMPILER_PASSES_BUFFER_USE_H_

#include <cstdint>
#include <vector>

#include "compiler/runtime/plan.h"

namespace tunefleet {

// Floats a view's offset must be a multiple of: 64 bytes (the kernels'
// vectors).
inline constexpr int64_t kAliasAlignFloats = 16;

struct BufferUse {
  std::vector<int> writers;      // per buffer: the steps that write it
  std::vector<int> readers;      // per buffer: the steps that read it
  std::vector<int> last_reader;  // per buffer: the last step that reads it, or -1
  std::vector<bool> pinned;      // per buffer: a model input or output
  std::vector<bool> view_root;   // per buffer: some view lies in it (alias_of)
};

BufferUse BufferUseOf(const ModelPlan& plan);

// The buffer `id` lies in: a view's root, else itself.
int RootOf(const ModelPlan& plan, int id);

// For a pass walking the steps in order: the last step so far that wrote
// each buffer, a view's writes counted as its root's. Before step j, Of(id)
// is the last writer of id's root before j (-1: none); Wrote(j) after it.
class LastWriters {
 public:
  explicit LastWriters(const ModelPlan& plan) : plan_(plan), writer_(plan.buffers.size(), -1) {}
  int Of(int id) const { return writer_[RootOf(plan_, id)]; }
  void Wrote(int j);

 private:
  const ModelPlan& plan_;
  std::vector<int> writer_;
};

// Removes the steps a pass made unnecessary (`drop`: one flag per step),
// the others kept in their order.
void EraseSteps(ModelPlan* plan, const std::vector<bool>& drop);

}  // namespace tunefleet

#endif  // TUNEFLEET_COMPILER_PASSES_BUFFER_USE_H_
