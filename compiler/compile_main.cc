// tunefleet_compile MODEL.onnx TARGET OUT_DIR [RECORDS]: `tunefleet compile`
// without the CLI, for build rules (examples/) that compile a model.
#include <iostream>

#include "compiler/model_compiler.h"

int main(int argc, char** argv) {
  if (argc < 4) {
    std::cerr << "usage: tunefleet_compile MODEL.onnx TARGET OUT_DIR [RECORDS]\n";
    return 2;
  }
  tunefleet::CompileOptions options{.model = argv[1],
                                    .records = argc > 4 ? argv[4] : "",
                                    .target = argv[2],
                                    .output_dir = argv[3]};
  absl::StatusOr<tunefleet::CompileReport> report = tunefleet::CompileModel(options);
  if (!report.ok()) {
    std::cerr << "tunefleet_compile: " << report.status().message() << "\n";
    return 1;
  }
  std::cout << "wrote " << report->library << " and " << report->archive << "\n";
  return 0;
}
