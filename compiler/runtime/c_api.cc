// The C API (tunefleet_model.h) over CompiledModel: errors become the
// calling thread's last error string.
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/runtime/model_runtime.h"
#include "compiler/runtime/tunefleet_model.h"

struct TfModel {
  std::unique_ptr<tunefleet::CompiledModel> model;
};

namespace {

thread_local std::string last_error;

int Fail(std::string message) {
  last_error = std::move(message);
  return 1;
}

int Succeed() {
  last_error.clear();
  return 0;
}

const tunefleet::PlanTensor* TensorAt(const TfModel* m, int i, bool input) {
  if (m == nullptr) return nullptr;
  const auto& list = input ? m->model->inputs() : m->model->outputs();
  if (i < 0 || i >= static_cast<int>(list.size())) return nullptr;
  return &list[i];
}

int64_t Elements(const tunefleet::PlanTensor* t) {
  if (t == nullptr) return -1;
  int64_t n = 1;
  for (int64_t d : t->shape) n *= d;
  return n;
}

// Checks the caller's pointers and counts against the model's tensors.
int CheckTensors(const TfModel* m, bool input, const void* const* buffers, const int64_t* counts,
                 int num) {
  const char* kind = input ? "input" : "output";
  const int expected = input ? tf_model_num_inputs(m) : tf_model_num_outputs(m);
  if (num != expected) {
    return Fail(absl::StrCat("the model has ", expected, " ", kind, "s; got ", num));
  }
  if (num > 0 && (buffers == nullptr || counts == nullptr)) {
    return Fail(absl::StrCat("null ", kind, " array"));
  }
  for (int i = 0; i < num; ++i) {
    const tunefleet::PlanTensor* t = TensorAt(m, i, input);
    if (buffers[i] == nullptr && Elements(t) > 0) {  // an empty tensor may have no buffer
      return Fail(absl::StrCat(kind, " '", t->name, "' is a null buffer"));
    }
    if (counts[i] != Elements(t)) {
      return Fail(absl::StrCat(kind, " '", t->name, "' has shape [", absl::StrJoin(t->shape, ", "),
                               "] (", Elements(t), " values); got ", counts[i]));
    }
  }
  return 0;
}

}  // namespace

extern "C" {

const char* tf_model_last_error(void) { return last_error.c_str(); }

int tf_model_open(const char* path, TfModel** model) {
  if (model == nullptr) return Fail("tf_model_open: null model pointer");
  *model = nullptr;
  if (path == nullptr) return Fail("tf_model_open: null path");
  absl::StatusOr<std::unique_ptr<tunefleet::CompiledModel>> opened =
      tunefleet::CompiledModel::Open(path);
  if (!opened.ok()) return Fail(std::string(opened.status().message()));
  *model = new TfModel{*std::move(opened)};
  return Succeed();
}

int tf_model_open_symbols(const TfModelSymbol* symbols, TfModel** model) {
  static_assert(sizeof(TfModelSymbol) == sizeof(tunefleet::LinkedSymbol) &&
                    offsetof(TfModelSymbol, address) == offsetof(tunefleet::LinkedSymbol, address),
                "TfModelSymbol and LinkedSymbol must share one layout");
  if (model == nullptr) return Fail("tf_model_open_symbols: null model pointer");
  *model = nullptr;
  absl::StatusOr<std::unique_ptr<tunefleet::CompiledModel>> opened =
      tunefleet::CompiledModel::OpenLinked(
          reinterpret_cast<const tunefleet::LinkedSymbol*>(symbols));
  if (!opened.ok()) return Fail(std::string(opened.status().message()));
  *model = new TfModel{*std::move(opened)};
  return Succeed();
}

void tf_model_close(TfModel* model) { delete model; }

const char* tf_model_target(const TfModel* m) {
  return m ? m->model->plan().target.c_str() : nullptr;
}

int tf_model_num_inputs(const TfModel* m) {
  return m ? static_cast<int>(m->model->inputs().size()) : -1;
}
int tf_model_num_outputs(const TfModel* m) {
  return m ? static_cast<int>(m->model->outputs().size()) : -1;
}

const char* tf_model_input_name(const TfModel* m, int i) {
  const tunefleet::PlanTensor* t = TensorAt(m, i, true);
  return t ? t->name.c_str() : nullptr;
}
int tf_model_input_rank(const TfModel* m, int i) {
  const tunefleet::PlanTensor* t = TensorAt(m, i, true);
  return t ? static_cast<int>(t->shape.size()) : -1;
}
const int64_t* tf_model_input_dims(const TfModel* m, int i) {
  const tunefleet::PlanTensor* t = TensorAt(m, i, true);
  return t ? t->shape.data() : nullptr;
}
int64_t tf_model_input_elements(const TfModel* m, int i) { return Elements(TensorAt(m, i, true)); }

const char* tf_model_output_name(const TfModel* m, int i) {
  const tunefleet::PlanTensor* t = TensorAt(m, i, false);
  return t ? t->name.c_str() : nullptr;
}
int tf_model_output_rank(const TfModel* m, int i) {
  const tunefleet::PlanTensor* t = TensorAt(m, i, false);
  return t ? static_cast<int>(t->shape.size()) : -1;
}
const int64_t* tf_model_output_dims(const TfModel* m, int i) {
  const tunefleet::PlanTensor* t = TensorAt(m, i, false);
  return t ? t->shape.data() : nullptr;
}
int64_t tf_model_output_elements(const TfModel* m, int i) {
  return Elements(TensorAt(m, i, false));
}

int tf_model_set_threads(TfModel* m, int num_threads) {
  if (m == nullptr) return Fail("tf_model_set_threads: null model");
  if (num_threads < 1) return Fail(absl::StrCat("thread count ", num_threads, " is not >= 1"));
  m->model->SetThreads(num_threads);
  return Succeed();
}

int tf_model_input_type(const TfModel* m, int i) {
  const tunefleet::PlanTensor* t = TensorAt(m, i, true);
  return t == nullptr ? -1 : static_cast<int>(t->type);
}

int tf_model_run(TfModel* m, const float* const* inputs, const int64_t* input_elements,
                 int num_inputs, float* const* outputs, const int64_t* output_elements,
                 int num_outputs) {
  if (m == nullptr) return Fail("tf_model_run: null model");
  for (int i = 0; i < tf_model_num_inputs(m); ++i) {
    const tunefleet::PlanTensor* t = TensorAt(m, i, true);
    if (t->type != tunefleet::ElementType::kFloat32) {
      return Fail(absl::StrCat("input '", t->name, "' is ", tunefleet::ElementTypeName(t->type),
                               ": pass it with tf_model_run_typed"));
    }
  }
  return tf_model_run_typed(m, reinterpret_cast<const void* const*>(inputs), input_elements,
                            num_inputs, outputs, output_elements, num_outputs);
}

int tf_model_run_typed(TfModel* m, const void* const* inputs, const int64_t* input_elements,
                       int num_inputs, float* const* outputs, const int64_t* output_elements,
                       int num_outputs) {
  if (m == nullptr) return Fail("tf_model_run: null model");
  if (CheckTensors(m, true, inputs, input_elements, num_inputs) != 0 ||
      CheckTensors(m, false, reinterpret_cast<const void* const*>(outputs), output_elements,
                   num_outputs) != 0) {
    return 1;
  }
  absl::Status status = m->model->Run(std::vector<const void*>(inputs, inputs + num_inputs),
                                      std::vector<float*>(outputs, outputs + num_outputs));
  if (!status.ok()) return Fail(std::string(status.message()));
  return Succeed();
}

}  // extern "C"
