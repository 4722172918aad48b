#pragma once
// The one file reader: every file memplan opens (plan files, presets, `scale --values`,
// config.json, safetensors and GGUF headers, index files) is read here, with one set of rules.
// Regular files only: a directory is "is a directory", a FIFO, device (/dev/zero) or socket "is not
// a regular file" - found with fstat after a non-blocking open, so a FIFO never blocks. A size
// limit per use, from the table below. Never maps or reads model weights. Errors are
// memplan::Error naming the path (or, when the caller gives a subject or a request field,
// naming it and quoting the path).

#include <cstdint>
#include <string>
#include <vector>

#include <memplan/error.hpp>

namespace memplan {

// The most bytes memplan reads from each kind of file: all the limits, in one place.
namespace read_limit {
inline constexpr uint64_t k_plan = 1u << 20;                 // --plan: the "inputs" of a JSON output (< 2 kB)
inline constexpr uint64_t k_presets = 16u << 20;             // --presets / MEMPLAN_DATA_DIR files (~20 kB)
inline constexpr uint64_t k_gradient_values = 256u << 20;    // scale --values: one number per line
inline constexpr uint64_t k_config = 16u << 20;              // config.json (real ones 0.5-10 kB)
inline constexpr uint64_t k_safetensors_index = 64u << 20;   // model.safetensors.index.json (~100k tensors)
inline constexpr uint64_t k_safetensors_header = 100000000;  // the safetensors format's own header limit
inline constexpr uint64_t k_gguf_header = 512ull << 20;      // GGUF metadata and tensor infos
inline constexpr uint64_t k_json_output = 16u << 20;  // diff: an estimate or fit --format json (5-50 kB)
inline constexpr uint64_t k_oom_message = 16u << 20;  // why-oom: a log holding an out-of-memory message
}  // namespace read_limit

// Size of a regular file in bytes, or Error ("no such file", "is a directory", ...).
uint64_t file_size(const std::string& path);

// The first min(max_bytes, size) bytes of a regular file.
std::string read_file_prefix(const std::string& path, uint64_t max_bytes);

// A regular file whole, or Error when it is larger than `limit` bytes. With a `subject` (the CLI
// passes the option it read), errors read `<subject>: cannot read "<path>": <why>`; without,
// `<path>: <why>`.
std::string read_small_file(const std::string& path, uint64_t limit, const std::string& subject = "");

// The same, for a file a request field names (Field::presets): errors concern that field.
std::string read_small_file(const std::string& path, uint64_t limit, Field field);

// True for an existing directory.
bool is_directory(const std::string& path);

// True for an existing regular file.
bool is_regular_file(const std::string& path);

// File names (not paths) in `dir` ending with `suffix`, sorted.
std::vector<std::string> list_files(const std::string& dir, const std::string& suffix);

// dir + "/" + name, without doubling the slash.
std::string join_path(const std::string& dir, const std::string& name);

}  // namespace memplan
