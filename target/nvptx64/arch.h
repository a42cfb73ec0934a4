// NVIDIA GPUs through LLVM's NVPTX backend: artifacts are PTX, configs
// respect the launch limits of TargetSpec (target/target_spec.h).
#ifndef TUNEFLEET_TARGET_NVPTX64_ARCH_H_
#define TUNEFLEET_TARGET_NVPTX64_ARCH_H_

#include "target/arch.h"

namespace tunefleet {

const Arch& Nvptx64Arch();

}  // namespace tunefleet

#endif  // TUNEFLEET_TARGET_NVPTX64_ARCH_H_
