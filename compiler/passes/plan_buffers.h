// Buffer planning for plan emission (emit_plan.h): the plan's buffers, which
// buffer each graph tensor's readers find, constants appended to the weights
// (64-byte aligned), and relayout steps where a consumer needs a tensor in
// another NCHW[x]c layout than its producer wrote (one copy per layout).
//
//   PlanBuffers buffers(&built.plan, &built.weights);
//   const int out = buffers.NewActivation("conv1_out", {1, 64, 56, 56}, 16, 56);
//   TF_ASSIGN_OR_RETURN(int nchw, buffers.Plain(out));  // adds a relayout step
#ifndef TUNEFLEET_COMPILER_PASSES_PLAN_BUFFERS_H_
#define TUNEFLEET_COMPILER_PASSES_PLAN_BUFFERS_H_

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/runtime/plan.h"

namespace tunefleet {

class PlanBuffers {
 public:
  PlanBuffers(ModelPlan* plan, std::vector<float>* weights) : plan_(plan), weights_(weights) {}

  // A buffer of `elements` floats holding `tensor` (its readers find it).
  int NewBuffer(const std::string& tensor, int64_t elements);

  // A buffer for 4-D `tensor` in NCHW[block]c with rows `row_width` wide;
  // `binds`: the buffer the graph's readers of `tensor` find (not so for a
  // relayout copy, which only the consumer that asked for it reads).
  int NewActivation(const std::string& tensor, const std::vector<int64_t>& dims, int64_t block,
                    int64_t row_width, bool binds = true);

  // `id` as NCHW[block]c with rows `row_width` wide: itself when it is laid
  // out so, else a buffer a relayout step fills (one per layout asked for).
  [[nodiscard]] absl::StatusOr<int> InLayout(int id, int64_t block, int64_t row_width);
  // `id` in NCHW (or itself when not 4-D).
  [[nodiscard]] absl::StatusOr<int> Plain(int id);

  // A buffer for `tensor` of `dims` in NCHW[block]c, rows `row_width` wide
  // (block 1, row 0 for a plain tensor of any rank), holding the same
  // floats as `id` with no copy (an alias of its root, PlanBuffer::alias_of);
  // `binds` as NewActivation's (a reshape's 4-D view binds its output; the
  // 4-D shape one consumer gives the floats it reads does not).
  int NewView(const std::string& tensor, int id, const std::vector<int64_t>& dims, int64_t block,
              int64_t row_width, bool binds = true);

  // A constant buffer holding `values`, appended to the weights.
  int AddConstant(const std::string& name, const std::vector<float>& values);

  // The buffer the readers of `tensor` find: -1 when none computes it yet.
  int Find(const std::string& tensor) const;
  // Makes `buffer` the one the readers of `tensor` find (an alias).
  void Bind(const std::string& tensor, int buffer) { tensors_[tensor] = buffer; }

 private:
  // NewBuffer, then (unless `binds`) the readers of `tensor` find what they
  // found before.
  int NewUnbound(const std::string& tensor, int64_t elements, bool binds);

  ModelPlan* plan_;
  std::vector<float>* weights_;
  std::map<std::string, int> tensors_;                          // tensor -> buffer
  std::map<std::tuple<int, int64_t, int64_t>, int> relayouts_;  // (buffer, block, row) -> copy
};

}  // namespace tunefleet

#endif  // TUNEFLEET_COMPILER_PASSES_PLAN_BUFFERS_H_
