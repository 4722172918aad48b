#pragma once
// Reading the few bytes that describe a model file: its size, its first N bytes, a small text
// file whole. Never maps or reads the weights. Errors are memplan::Error naming the path.

#include <cstdint>
#include <string>
#include <vector>

namespace memplan {

// Size of a regular file in bytes, or Error ("not found", "is a directory", ...).
uint64_t file_size(const std::string& path);

// The first min(max_bytes, size) bytes of the file.
std::string read_file_prefix(const std::string& path, uint64_t max_bytes);

// The whole file, or Error when it is larger than `limit` bytes (config.json, index.json).
std::string read_small_file(const std::string& path, uint64_t limit);

// True for an existing directory.
bool is_directory(const std::string& path);

// True for an existing regular file.
bool is_regular_file(const std::string& path);

// File names (not paths) in `dir` ending with `suffix`, sorted.
std::vector<std::string> list_files(const std::string& dir, const std::string& suffix);

// dir + "/" + name, without doubling the slash.
std::string join_path(const std::string& dir, const std::string& name);

}  // namespace memplan
