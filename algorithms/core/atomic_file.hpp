// Write-then-rename output files: readers never see a half-written file, and a failure (or an
// exception unwinding past an uncommitted AtomicFile) leaves nothing behind.
#pragma once
#include <cstdio>
#include <string>

namespace repix {

class AtomicFile {
 public:
  explicit AtomicFile(std::string path);  // opens "<path>.tmp.<pid>" for binary writing
  ~AtomicFile();                          // removes the temporary unless committed
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  std::FILE* stream() const { return fp_; }
  void write(const void* data, std::size_t bytes);
  void commit();  // flush, close, rename over `path`; throws repix::Error on any failure

 private:
  std::string path_, tmp_;
  std::FILE* fp_ = nullptr;
  bool committed_ = false;
};

// Whole-string convenience.
void write_file_atomic(const std::string& path, const std::string& content);

}  // namespace repix
