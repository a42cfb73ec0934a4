// x86-64: SSE, AVX/AVX2 (16 ymm registers) and AVX-512 (32 zmm registers).
#ifndef TUNEFLEET_TARGET_X86_64_ARCH_H_
#define TUNEFLEET_TARGET_X86_64_ARCH_H_

#include "target/arch.h"

namespace tunefleet {

const Arch& X86_64Arch();

}  // namespace tunefleet

#endif  // TUNEFLEET_TARGET_X86_64_ARCH_H_
