/* Classifies one image tensor with a model compiled by `tunefleet compile`:
 *
 *   classify MODEL_DIR [IMAGE.raw [SCORES.raw]]
 *
 * IMAGE.raw holds the input's floats (NCHW, e.g. 1x3x224x224 normalised
 * RGB); without it (or with "-") a fixed test pattern is used. Prints the
 * top class and its score, and writes all the scores' floats to SCORES.raw
 * when given (the tests compare builds for two architectures that way).
 * Uses only the C API of compiler/runtime/tunefleet_model.h.
 *
 * Built with -DTF_MODEL_LINKED and linked with a compile's libmodel.a, the
 * model is inside the program: MODEL_DIR is then ignored ("-"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/runtime/tunefleet_model.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s MODEL_DIR [IMAGE.raw|- [SCORES.raw]]\n", argv[0]);
    return 2;
  }
  TfModel* model = NULL;
#ifdef TF_MODEL_LINKED
  const int opened = tf_model_open_linked(&model);
#else
  const int opened = tf_model_open(argv[1], &model);
#endif
  if (opened != 0) {
    fprintf(stderr, "classify: %s\n", tf_model_last_error());
    return 1;
  }
  const int64_t in_n = tf_model_input_elements(model, 0);
  const int64_t out_n = tf_model_output_elements(model, 0);
  float* image = malloc(sizeof(float) * in_n);
  float* scores = malloc(sizeof(float) * out_n);
  for (int64_t i = 0; i < in_n; ++i) image[i] = (float)((i * 7919) % 255) / 255.0f - 0.5f;
  if (argc > 2 && strcmp(argv[2], "-") != 0) {
    FILE* f = fopen(argv[2], "rb");
    if (f == NULL || fread(image, sizeof(float), in_n, f) != (size_t)in_n) {
      fprintf(stderr, "classify: %s does not hold %lld floats\n", argv[2], (long long)in_n);
      return 1;
    }
    fclose(f);
  }
  printf("model for '%s': input '%s' (%lld floats), output '%s' (%lld floats)\n",
         tf_model_target(model), tf_model_input_name(model, 0), (long long)in_n,
         tf_model_output_name(model, 0), (long long)out_n);
  const float* inputs[1] = {image};
  float* outputs[1] = {scores};
  if (tf_model_set_threads(model, 2) != 0 ||
      tf_model_run(model, inputs, &in_n, 1, outputs, &out_n, 1) != 0) {
    fprintf(stderr, "classify: %s\n", tf_model_last_error());
    return 1;
  }
  int64_t best = 0;
  for (int64_t i = 1; i < out_n; ++i) {
    if (scores[i] > scores[best]) best = i;
  }
  printf("class %lld (score %g)\n", (long long)best, scores[best]);
  if (argc > 3) {
    FILE* f = fopen(argv[3], "wb");
    if (f == NULL || fwrite(scores, sizeof(float), out_n, f) != (size_t)out_n || fclose(f) != 0) {
      fprintf(stderr, "classify: cannot write %s\n", argv[3]);
      return 1;
    }
  }
  free(image);
  free(scores);
  tf_model_close(model);
  return 0;
}
