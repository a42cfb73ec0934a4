// The static form of a compiled model (libmodel.a beside model.so): the
// same kernel and data objects in an ar archive, plus one object holding a
// table of their symbols and `tf_model_open_linked`, which opens the model
// linked into the program through the C API (tunefleet_model.h) instead of
// dlopen-ing model.so.
//
//   std::vector<ArchiveMember> members = ...;  // kernel + data objects
//   TF_ASSIGN_OR_RETURN(std::string table, LinkedTableObject(symbols, target));
//   members.push_back({"tf_model_linked.o", table});
//   TF_RETURN_IF_ERROR(WriteStaticArchive("out/libmodel.a", members));
#ifndef TUNEFLEET_COMPILER_MODEL_ARCHIVE_H_
#define TUNEFLEET_COMPILER_MODEL_ARCHIVE_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "toolchain/codegen/llvm_backend.h"
#include "toolchain/codegen/target.h"

namespace tunefleet {

// The static archive inside a compile output directory.
inline constexpr char kModelArchiveName[] = "libmodel.a";

// An object defining `int tf_model_open_linked(TfModel**)`, which calls the
// C API's tf_model_open_symbols with a table of `symbols` (name, address).
[[nodiscard]] absl::StatusOr<std::string> LinkedTableObject(
    const std::vector<ExportedSymbol>& symbols, const TargetSpec& target);

struct ArchiveMember {
  std::string name;   // e.g. "tf_kernel_3.o"
  std::string bytes;  // an ELF object
};

// Writes a GNU ar archive with a symbol index (what `ar rcs` writes),
// deterministic: no timestamps or owners.
[[nodiscard]] absl::Status WriteStaticArchive(const std::string& path,
                                              const std::vector<ArchiveMember>& members);

}  // namespace tunefleet

#endif  // TUNEFLEET_COMPILER_MODEL_ARCHIVE_H_
