#include "compiler/passes/plan_buffers.h"

#include "absl/strings/str_cat.h"

namespace tunefleet {
namespace {

// Floats between constants, so each starts 64-byte aligned in the blob.
constexpr int64_t kConstantAlignFloats = 16;

}  // namespace

int PlanBuffers::NewBuffer(const std::string& tensor, int64_t elements) {
  plan_->buffers.push_back({tensor, elements, -1});
  const int id = static_cast<int>(plan_->buffers.size()) - 1;
  tensors_[tensor] = id;
  return id;
}

int PlanBuffers::NewUnbound(const std::string& tensor, int64_t elements, bool binds) {
  const int bound = Find(tensor);
  const int id = NewBuffer(tensor, elements);
  if (binds) return id;
  if (bound >= 0) {
    tensors_[tensor] = bound;
  } else {
    tensors_.erase(tensor);
  }
  return id;
}

int PlanBuffers::NewActivation(const std::string& tensor, const std::vector<int64_t>& dims,
                               int64_t block, int64_t row_width, bool binds) {
  const int id = NewUnbound(tensor, dims[0] * dims[1] * dims[2] * row_width, binds);
  PlanBuffer& buffer = plan_->buffers[id];
  buffer.shape = dims;
  buffer.block = block;
  buffer.row_width = row_width;
  return id;
}

[[nodiscard]] absl::StatusOr<int> PlanBuffers::InLayout(int id, int64_t block, int64_t row_width) {
  const PlanBuffer& buffer = plan_->buffers[id];
  if (!buffer.is_4d()) {
    if (block == 1) return id;
    return absl::InternalError(absl::StrCat("tensor '", buffer.tensor, "' is not 4-D"));
  }
  if (buffer.block == block && buffer.RowWidth() == row_width) return id;
  const auto key = std::make_tuple(id, block, row_width);
  auto it = relayouts_.find(key);
  if (it != relayouts_.end()) return it->second;
  const std::string tensor = buffer.tensor;
  const std::vector<int64_t> dims = buffer.shape;
  const int converted = NewActivation(tensor, dims, block, row_width, /*binds=*/false);
  PlanStep step;
  step.op = StepOp::kRelayout;
  step.node = tensor;
  step.inputs = {id};
  step.outputs = {converted};
  plan_->steps.push_back(std::move(step));
  relayouts_[key] = converted;
  return converted;
}

[[nodiscard]] absl::StatusOr<int> PlanBuffers::Plain(int id) {
  const PlanBuffer& buffer = plan_->buffers[id];
  return buffer.is_4d() ? InLayout(id, 1, buffer.shape[3]) : absl::StatusOr<int>(id);
}

int PlanBuffers::NewView(const std::string& tensor, int id, const std::vector<int64_t>& dims,
                         int64_t block, int64_t row_width, bool binds) {
  const PlanBuffer source = plan_->buffers[id];
  const int view = NewUnbound(tensor, source.elements, binds);
  PlanBuffer& buffer = plan_->buffers[view];
  buffer.shape = dims;
  buffer.block = block;
  buffer.row_width = row_width;
  buffer.alias_of = source.alias_of >= 0 ? source.alias_of : id;
  buffer.alias_offset = source.alias_of >= 0 ? source.alias_offset : 0;
  return view;
}

int PlanBuffers::AddConstant(const std::string& name, const std::vector<float>& values) {
  while (weights_->size() % kConstantAlignFloats != 0) weights_->push_back(0);
  const int64_t offset = static_cast<int64_t>(weights_->size());
  weights_->insert(weights_->end(), values.begin(), values.end());
  plan_->buffers.push_back({name, static_cast<int64_t>(values.size()), offset});
  return static_cast<int>(plan_->buffers.size()) - 1;
}

int PlanBuffers::Find(const std::string& tensor) const {
  auto it = tensors_.find(tensor);
  return it == tensors_.end() ? -1 : it->second;
}

}  // namespace tunefleet
