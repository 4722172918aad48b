#include "core/base/file_reader.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>

#include <memplan/error.hpp>

namespace memplan {
namespace {

namespace fs = std::filesystem;

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

File open_for_reading(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw Error(path, std::string("cannot open (") + std::strerror(errno) + ")");
  return File(f);
}

}  // namespace

uint64_t file_size(const std::string& path) {
  std::error_code ec;
  fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st)) throw Error(path, "no such file");
  if (fs::is_directory(st)) throw Error(path, "is a directory (expected a file)");
  if (!fs::is_regular_file(st)) throw Error(path, "is not a regular file");
  uint64_t size = fs::file_size(path, ec);
  if (ec) throw Error(path, "cannot read its size (" + ec.message() + ")");
  return size;
}

std::string read_file_prefix(const std::string& path, uint64_t max_bytes) {
  uint64_t size = file_size(path);
  uint64_t n = std::min(size, max_bytes);
  File f = open_for_reading(path);
  std::string bytes(static_cast<size_t>(n), '\0');
  size_t got = n ? std::fread(bytes.data(), 1, bytes.size(), f.get()) : 0;
  if (got != bytes.size()) throw Error(path, "read failed after " + std::to_string(got) + " bytes");
  return bytes;
}

std::string read_small_file(const std::string& path, uint64_t limit) {
  uint64_t size = file_size(path);
  if (size > limit)
    throw Error(path, "is " + std::to_string(size) + " bytes, more than the " + std::to_string(limit) +
                          " bytes memplan reads from such a file");
  return read_file_prefix(path, size);
}

bool is_directory(const std::string& path) {
  std::error_code ec;
  return fs::is_directory(path, ec);
}

bool is_regular_file(const std::string& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec);
}

std::vector<std::string> list_files(const std::string& dir, const std::string& suffix) {
  std::vector<std::string> names;
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) throw Error(dir, "cannot list the directory (" + ec.message() + ")");
  for (const fs::directory_entry& e : it) {
    std::string name = e.path().filename().string();
    if (name.size() >= suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0 && e.is_regular_file(ec))
      names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string join_path(const std::string& dir, const std::string& name) {
  if (dir.empty()) return name;
  if (dir.back() == '/') return dir + name;
  return dir + "/" + name;
}

}  // namespace memplan
