#include "target/nvptx64/arch.h"

#include "absl/strings/str_cat.h"

namespace tunefleet {
namespace {

class Nvptx64 final : public Arch {
 public:
  absl::string_view name() const override { return "nvptx64"; }
  uint16_t elf_machine() const override { return 0; }  // PTX text, not ELF
  bool is_gpu() const override { return true; }

  // Vector loads of 4 floats (ld.v4.f32); registers are the GPU's own
  // business (launch limits, not a register tile).
  VectorShape Vectors(FeatureTest has_llvm_feature) const override {
    VectorShape shape;
    shape.vector_bits = 128;
    shape.max_vector_bits = 128;
    shape.vector_registers = 0;
    return shape;
  }

  std::string Family(const VectorShape& vectors, absl::string_view cpu) const override {
    return cpu.empty() ? "cuda" : absl::StrCat("cuda-", cpu);
  }

  absl::string_view VectorRegisterName(int vector_bits) const override { return "v4.f32"; }
};

}  // namespace

const Arch& Nvptx64Arch() {
  static const Nvptx64 arch;
  return arch;
}

}  // namespace tunefleet
