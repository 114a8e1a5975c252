#include "core/atomic_file.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.hpp"

namespace repix {

AtomicFile::AtomicFile(std::string path)
    : path_(std::move(path)), tmp_(path_ + ".tmp." + std::to_string(::getpid())) {
  fp_ = std::fopen(tmp_.c_str(), "wb");
  if (!fp_) throw Error("cannot write '" + path_ + "': " + std::strerror(errno));
}

AtomicFile::~AtomicFile() {
  if (fp_) std::fclose(fp_);
  if (!committed_) std::remove(tmp_.c_str());
}

void AtomicFile::write(const void* data, std::size_t bytes) {
  if (bytes && std::fwrite(data, 1, bytes, fp_) != bytes)
    throw Error("cannot write '" + path_ + "': " + std::strerror(errno));
}

void AtomicFile::commit() {
  const bool ok = std::fflush(fp_) == 0 && !std::ferror(fp_);
  const int close_rc = std::fclose(fp_);
  fp_ = nullptr;
  if (!ok || close_rc != 0) throw Error("cannot write '" + path_ + "': " + std::strerror(errno));
  if (std::rename(tmp_.c_str(), path_.c_str()) != 0)
    throw Error("cannot rename into '" + path_ + "': " + std::strerror(errno));
  committed_ = true;
}

void write_file_atomic(const std::string& path, const std::string& content) {
  AtomicFile f(path);
  f.write(content.data(), content.size());
  f.commit();
}

}  // namespace repix
