// What this machine is, for the agent's Register message (DeviceInfo in
// proto/fleet.proto): architecture, CPU model, the ISA features that matter
// for kernels, cores, memory, and LLVM's CPU name when it can be guessed.
//
//   proto::DeviceInfo device = DetectHostDevice();
//
// Informational: the tracker schedules by device key, not by these fields.
#ifndef TUNEFLEET_DEVICE_AGENT_DEVICE_INFO_H_
#define TUNEFLEET_DEVICE_AGENT_DEVICE_INFO_H_

#include <string>

#include "proto/fleet.pb.h"

namespace tunefleet {

// Reads /proc/cpuinfo, /proc/meminfo, uname and the affinity mask. Fields it
// cannot determine are left empty / 0; never fails.
proto::DeviceInfo DetectHostDevice();

// The parsing behind DetectHostDevice, for tests: fills cpu_model,
// isa_features (kernel-relevant ones only, in a fixed order; "asimd" also
// adds "neon"), memory_bytes and llvm_cpu (a best guess, or empty) from the
// files' text; `arch` is copied.
proto::DeviceInfo ParseDeviceInfo(const std::string& arch, const std::string& cpuinfo,
                                  const std::string& meminfo);

}  // namespace tunefleet

#endif  // TUNEFLEET_DEVICE_AGENT_DEVICE_INFO_H_
