#include "CompileShape.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/raw_ostream.h"

namespace mk::test {

llvm::Expected<CompiledModel> compileShape(mlir::MLIRContext &context, const ModelShape &shape,
                                           const CompileOptions &options) {
  int fd = -1;
  llvm::SmallString<128> path;
  if (std::error_code error = llvm::sys::fs::createTemporaryFile("mk-shape", "mlir", fd, path))
    return llvm::createStringError(error, "cannot make a temporary file");
  llvm::FileRemover removeLater(path);
  {
    llvm::raw_fd_ostream file(fd, /*shouldClose=*/true);
    file << unfusedModuleText(shape);
  }
  return compileToSchedule(context, path.str().str(), options);
}

} // namespace mk::test
