#include "compiler/model_archive.h"

#include "absl/strings/str_cat.h"
#include "llvm/Object/ArchiveWriter.h"
#include "toolchain/codegen/llvm_backend.h"
#include "toolchain/codegen/llvm_headers.h"

namespace tunefleet {

[[nodiscard]] absl::StatusOr<std::string> LinkedTableObject(
    const std::vector<ExportedSymbol>& symbols, const TargetSpec& target) {
  llvm::LLVMContext context;
  llvm::Module module("tf_model_linked", context);
  llvm::PointerType* ptr = llvm::PointerType::getUnqual(context);
  llvm::StructType* entry_type = llvm::StructType::get(context, {ptr, ptr});
  std::vector<llvm::Constant*> entries;
  for (const ExportedSymbol& symbol : symbols) {
    auto* name_init = llvm::ConstantDataArray::getString(context, symbol.name, /*AddNull=*/true);
    auto* name = new llvm::GlobalVariable(module, name_init->getType(), true,
                                          llvm::GlobalValue::PrivateLinkage, name_init, ".name");
    name->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
    llvm::Constant* address;
    if (symbol.function) {
      address = llvm::cast<llvm::Constant>(
          module
              .getOrInsertFunction(symbol.name,
                                   llvm::FunctionType::get(llvm::Type::getVoidTy(context), false))
              .getCallee());
    } else {
      // Only the address matters; the byte type says nothing of the size.
      address = new llvm::GlobalVariable(module, llvm::Type::getInt8Ty(context), true,
                                         llvm::GlobalValue::ExternalLinkage, nullptr, symbol.name);
    }
    entries.push_back(llvm::ConstantStruct::get(entry_type, {name, address}));
  }
  entries.push_back(llvm::ConstantStruct::get(
      entry_type, {llvm::ConstantPointerNull::get(ptr), llvm::ConstantPointerNull::get(ptr)}));
  auto* table_type = llvm::ArrayType::get(entry_type, entries.size());
  auto* table = new llvm::GlobalVariable(
      module, table_type, true, llvm::GlobalValue::InternalLinkage,
      llvm::ConstantArray::get(table_type, entries), "tf_model_linked_symbols");

  llvm::Type* i32 = llvm::Type::getInt32Ty(context);
  llvm::Function* open =
      llvm::Function::Create(llvm::FunctionType::get(i32, {ptr}, false),
                             llvm::GlobalValue::ExternalLinkage, "tf_model_open_linked", module);
  llvm::FunctionCallee open_symbols = module.getOrInsertFunction(
      "tf_model_open_symbols", llvm::FunctionType::get(i32, {ptr, ptr}, false));
  llvm::IRBuilder<> builder(llvm::BasicBlock::Create(context, "entry", open));
  builder.CreateRet(builder.CreateCall(open_symbols, {table, open->getArg(0)}));
  if (llvm::verifyModule(module, &llvm::errs())) {
    return absl::InternalError("the linked model's symbol table does not verify");
  }
  return OptimizeAndEmitObject(module, target, /*opt_level=*/0, nullptr);
}

[[nodiscard]] absl::Status WriteStaticArchive(const std::string& path,
                                              const std::vector<ArchiveMember>& members) {
  std::vector<llvm::NewArchiveMember> archive_members;
  for (const ArchiveMember& member : members) {
    archive_members.emplace_back(llvm::MemoryBufferRef(member.bytes, member.name));
  }
  llvm::Error error =
      llvm::writeArchive(path, archive_members, llvm::SymtabWritingMode::NormalSymtab,
                         llvm::object::Archive::K_GNU, /*Deterministic=*/true,
                         /*Thin=*/false);
  if (error) {
    return absl::InternalError(
        absl::StrCat("cannot write ", path, ": ", llvm::toString(std::move(error))));
  }
  return absl::OkStatus();
}

}  // namespace tunefleet
