/* tunefleet_model.h: the C API of models compiled by `tunefleet compile`.
 *
 * A compiled model is a directory holding model.so (the tuned kernels, the
 * packed weights and the execution plan) and libmodel.a (the same, to link
 * into a program: tf_model_open_linked below). This API (libtunefleet_model.so,
 * or the static //compiler/runtime:c_api library) opens it in-process,
 * describes its inputs and outputs, and runs it:
 *
 *   TfModel* model = NULL;
 *   if (tf_model_open("out", &model) != 0) {
 *     fprintf(stderr, "%s\n", tf_model_last_error());
 *     return 1;
 *   }
 *   tf_model_set_threads(model, 2);
 *   const float* in[1] = {image};            // tf_model_input_elements(model, 0) floats
 *   float* out[1] = {scores};                // tf_model_output_elements(model, 0) floats
 *   int64_t in_n[1] = {3 * 224 * 224}, out_n[1] = {1000};
 *   if (tf_model_run(model, in, in_n, 1, out, out_n, 1) != 0) ...tf_model_last_error()...
 *   tf_model_close(model);
 *
 * Every function returning int returns 0 on success and non-zero on failure;
 * tf_model_last_error() then says what was wrong (a missing file, a library
 * built for another architecture or for CPU features this machine lacks, a
 * wrong element count naming the tensor and its shape, a null buffer). The
 * error string is per thread and valid until the thread's next call.
 * A TfModel is used by one thread at a time.
 */
#ifndef TUNEFLEET_COMPILER_RUNTIME_TUNEFLEET_MODEL_H_
#define TUNEFLEET_COMPILER_RUNTIME_TUNEFLEET_MODEL_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TF_MODEL_API_VERSION 1

typedef struct TfModel TfModel;

/* The last error of this thread ("" if none). */
const char* tf_model_last_error(void);

/* Opens a compiled model: the output directory of `tunefleet compile`, or
 * its model.so. Sets *model (NULL on failure). */
int tf_model_open(const char* path, TfModel** model);
void tf_model_close(TfModel* model);

/* A model linked into the program. `tunefleet compile` also writes
 * libmodel.a: the same kernels, weights and plan as objects, and
 * tf_model_open_linked(), which opens them with no model.so at run time.
 * Link libmodel.a and this runtime (the static //compiler/runtime:c_api
 * library, or libtunefleet_model.so) into the program:
 *
 *   cc app.c out/libmodel.a -ltunefleet_model ...
 *   if (tf_model_open_linked(&model) != 0) ...tf_model_last_error()...
 *
 * One model per program (its symbols, tf_kernel_<i>, tf_model_plan, are
 * global). tf_model_open_symbols is what tf_model_open_linked calls: a table
 * of the model's symbols (name, address), ending with {NULL, NULL}. */
typedef struct TfModelSymbol {
  const char* name;
  const void* address;
} TfModelSymbol;
int tf_model_open_linked(TfModel** model); /* defined in libmodel.a */
int tf_model_open_symbols(const TfModelSymbol* symbols, TfModel** model);

/* The target string the model was compiled for. */
const char* tf_model_target(const TfModel* model);

int tf_model_num_inputs(const TfModel* model);
int tf_model_num_outputs(const TfModel* model);
/* Name, rank, dimensions (NCHW as in the ONNX model) and element count of
 * input/output i; NULL / -1 for an index out of range. */
const char* tf_model_input_name(const TfModel* model, int i);
int tf_model_input_rank(const TfModel* model, int i);
const int64_t* tf_model_input_dims(const TfModel* model, int i);
int64_t tf_model_input_elements(const TfModel* model, int i);
const char* tf_model_output_name(const TfModel* model, int i);
int tf_model_output_rank(const TfModel* model, int i);
const int64_t* tf_model_output_dims(const TfModel* model, int i);
int64_t tf_model_output_elements(const TfModel* model, int i);

/* Threads that run the model (>= 1; the calling thread counts). */
int tf_model_set_threads(TfModel* model, int num_threads);

/* What input i holds, as ONNX's TensorProto element types (ONNX Runtime's
 * too): TF_DTYPE_FLOAT32, or an integer input such as a BERT's token ids
 * (int64 or int32 as the ONNX model declares it, each value within +-2^24);
 * -1 for an index out of range. Outputs are always float32. */
#define TF_DTYPE_FLOAT32 1
#define TF_DTYPE_INT32 6
#define TF_DTYPE_INT64 7
int tf_model_input_type(const TfModel* model, int i);
/* One inference. inputs[i] holds input_elements[i] fp32 values (which must
 * equal tf_model_input_elements(model, i)); outputs likewise. A model with
 * an integer input is run with tf_model_run_typed. */
int tf_model_run(TfModel* model, const float* const* inputs, const int64_t* input_elements,
                 int num_inputs, float* const* outputs, const int64_t* output_elements,
                 int num_outputs);
/* tf_model_run with each input of its tf_model_input_type: inputs[i] points
 * to input_elements[i] floats, int32_t or int64_t values. An index out of
 * its table (a token id past the vocabulary) fails naming the node. */
int tf_model_run_typed(TfModel* model, const void* const* inputs, const int64_t* input_elements,
                       int num_inputs, float* const* outputs, const int64_t* output_elements,
                       int num_outputs);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TUNEFLEET_COMPILER_RUNTIME_TUNEFLEET_MODEL_H_ */
