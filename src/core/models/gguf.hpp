#pragma once
// GGUF files (llama.cpp, versions 2 and 3): the header, the metadata key/values and the tensor
// infos, never the tensor data. Bytes per tensor come from the ggml type's block size and bytes
// per block (Q4_K: 144 bytes per 256 weights), so the total weight bytes are exact.
// Checks follow ggml's gguf.cpp: magic, version, at most 4 dims, known types, rows a multiple
// of the block size, no duplicate keys or tensor names, offsets aligned and in sequence, data
// inside the file.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include <memplan/error.hpp>
#include <memplan/model.hpp>
#include "core/base/file_reader.hpp"

namespace memplan {

// A ggml tensor type: `type_size` bytes hold `block` elements.
struct GgufType {
  uint32_t id;
  const char* name;  // "Q4_K"
  uint64_t block;
  uint64_t type_size;
  const char* storage_format;  // memplan's name when one fits ("fp16"), else ""
};

// The types memplan knows (ids 0-30 except the removed 4, 5; TQ1_0, TQ2_0, MXFP4).
const std::vector<GgufType>& gguf_types();

// The type with this id, or nullptr.
const GgufType* find_gguf_type(uint32_t id);

struct GgufTensor {
  std::string name;
  std::vector<uint64_t> dims;  // ggml order: dims[0] is the innermost (row) length
  uint32_t type = 0;
  uint64_t offset = 0;  // relative to the start of the tensor data
  uint64_t elements = 0;
  uint64_t bytes = 0;  // elements / block x type_size
};

struct GgufFile {
  std::string file;
  uint64_t file_size = 0;
  uint32_t version = 0;
  uint64_t alignment = 32;
  nlohmann::json metadata =
      nlohmann::json::object();     // key -> value; long arrays as {"array": type, "length": n}
  std::vector<GgufTensor> tensors;  // in file order
  uint64_t data_offset = 0;         // where tensor data starts in the file
  uint64_t data_end = 0;            // data_offset + end of the last tensor
};

// Thrown by parse_gguf when `bytes` ends before the header does but the file is longer: the
// caller should read more of it (read_gguf doubles its read until the header fits).
class GgufNeedMore : public Error {
 public:
  using Error::Error;
};

// Largest header (metadata + tensor infos) memplan reads; tokenizer vocabularies make a few MB.
constexpr uint64_t k_max_gguf_header = read_limit::k_gguf_header;

// Parses a GGUF header from the first bytes of a file of `file_size` bytes.
GgufFile parse_gguf(std::string_view bytes, uint64_t file_size, std::string_view file_name);

// Reads a .gguf file's header, 1 MiB first and more only when the metadata needs it.
GgufFile read_gguf_file(const std::string& path);

// Parameters, tensors, exact weight bytes and architecture (from general.architecture and the
// <arch>.* keys) of a parsed file.
ModelSpec model_spec_of(const GgufFile& g);

// read_gguf_file + model_spec_of.
ModelSpec read_gguf(const std::string& path);

// Bytes and elements per ggml type, largest bytes first: {type name, tensors, elements, bytes}.
struct GgufTypeTotal {
  std::string type;
  uint64_t tensors = 0;
  uint64_t elements = 0;
  uint64_t bytes = 0;
};
std::vector<GgufTypeTotal> gguf_type_totals(const GgufFile& g);

}  // namespace memplan
