#pragma once
// safetensors files: the 8-byte little-endian header length and the JSON header, never the
// weights. Validated as the reference implementation (huggingface/safetensors tensor.rs) does:
// header <= 100,000,000 bytes, known dtypes, shape x dtype size = byte span, tensors contiguous
// from offset 0 without gaps or overlaps, data ending exactly at the end of the file, no
// duplicate names. A sharded model is read through model.safetensors.index.json or as every
// *.safetensors file in a folder.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <memplan/model.hpp>
#include <memplan/model_files.hpp>
#include "core/base/file_reader.hpp"

namespace memplan {

// A dtype the format defines, with its size in bits (F4 = 4, F6_* = 6).
struct SafetensorsDtype {
  const char* name;  // "BF16"
  uint64_t bits;
  const char* storage_format;  // memplan's name for it ("bf16"), "" when it has none
};

// Every dtype of the reference enum: BOOL F4 F6_E2M3 F6_E3M2 U8 I8 F8_E5M2 F8_E4M3 F8_E8M0
// F8_E4M3FNUZ F8_E5M2FNUZ I16 U16 F16 BF16 I32 U32 F32 C64 F64 I64 U64.
const std::vector<SafetensorsDtype>& safetensors_dtypes();

// The dtype called `name` (exact, upper case), or nullptr.
const SafetensorsDtype* find_safetensors_dtype(std::string_view name);

struct SafetensorsTensor {
  std::string name;
  std::string dtype;
  std::vector<uint64_t> shape;  // as in the file (PyTorch order)
  uint64_t begin = 0;           // data_offsets, relative to the byte buffer after the header
  uint64_t end = 0;
  uint64_t elements = 0;  // product of shape (1 for a scalar, 0 for an empty tensor)
  uint64_t bytes() const { return end - begin; }
};

// One file's header.
struct SafetensorsHeader {
  std::string file;
  uint64_t file_size = 0;
  uint64_t header_length = 0;                   // N, the JSON length (padding included)
  uint64_t data_bytes = 0;                      // file_size - 8 - N
  std::vector<SafetensorsTensor> tensors;       // in data order
  std::map<std::string, std::string> metadata;  // __metadata__
};

// Largest header the reference accepts (MAX_HEADER_SIZE).
constexpr uint64_t k_max_safetensors_header = read_limit::k_safetensors_header;

// Parses the start of a safetensors file: `bytes` holds its first bytes (at least 8 + N of
// them for a good file; fewer is a truncation error), `file_size` its full size.
SafetensorsHeader parse_safetensors_header(std::string_view bytes, uint64_t file_size,
                                           std::string_view file_name);

// Reads and validates one file's header (reads 8 + N bytes).
SafetensorsHeader read_safetensors_header(const std::string& path);

// model.safetensors.index.json.
struct SafetensorsIndex {
  std::optional<uint64_t> total_size;                           // metadata.total_size (tensor data bytes)
  std::vector<std::pair<std::string, std::string>> weight_map;  // tensor -> shard file, sorted by tensor
  std::vector<std::string> shards;                              // distinct shard files, sorted
};

// Largest index file memplan reads (the largest seen is ~24 MB).
constexpr uint64_t k_max_index_bytes = read_limit::k_safetensors_index;

SafetensorsIndex parse_safetensors_index(std::string_view json_text, std::string_view file_name);

// Elements and bytes of one dtype.
// A model's safetensors, summed over its shards.
struct SafetensorsModel {
  std::string path;        // as given
  std::string index_file;  // the index used, "" when none
  std::optional<uint64_t> index_total_size;
  std::vector<SafetensorsHeader> shards;
  std::vector<DtypeTotal> by_dtype;  // every tensor, largest bytes first
  uint64_t tensors = 0;              // every tensor
  uint64_t elements = 0;
  uint64_t bytes = 0;
  DtypeTotal buffers;       // non-parameters stored with the weights (inv_freq, attn.bias, position_ids)
  uint64_t parameters = 0;  // elements of the other tensors
  uint64_t parameter_tensors = 0;
  uint64_t parameter_bytes = 0;
  std::string weight_format;  // storage format of most parameter bytes, "" if none fits
  std::vector<std::string> notes;
};

// Reads a .safetensors file, a model.safetensors.index.json, or a folder (its index if there is
// one, else every *.safetensors in it).
SafetensorsModel read_safetensors_model(const std::string& path_or_dir);

// The ModelSpec of what was read: parameters, tensors, weight format and bytes. When a
// config.json lies next to the weights, its architecture is used too (and said so in notes).
ModelSpec model_spec_of(const SafetensorsModel& m);

// read_safetensors_model + model_spec_of.
ModelSpec read_safetensors(const std::string& path_or_dir);

// True for tensor names that are buffers, not parameters (rotary inv_freq, causal-mask attn.bias,
// position_ids).
bool is_buffer_tensor_name(std::string_view name);

}  // namespace memplan
