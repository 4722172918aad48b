#pragma once
// Storage formats: how many bytes one number takes in memory, as an exact fraction
// (int4 is 1/2 byte; nf4 with its block constants is a little more).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace memplan {

// Bytes per element = num / den.
struct ElementCost {
  uint64_t num = 0;
  uint64_t den = 1;

  double bytes() const { return static_cast<double>(num) / static_cast<double>(den); }
  bool operator==(const ElementCost& o) const { return num * o.den == o.num * den; }
};

// The formats memplan knows, as values a request can hold (quantize, kv_format).
enum class StorageFormatId {
  fp64,
  fp32,
  tf32,
  fp16,
  bf16,
  fp8_e4m3,
  fp8_e5m2,
  int8,
  int4,
  nf4,
  nf4_dq,
  q8_0,
  q4_0,
  gptq_4bit,
  awq_4bit,
  mxfp4
};

// NormalFloat4 with or without double quantisation: the 4-bit formats QLoRA trains on
// (bitsandbytes' Linear4bit, torchao's NF4Tensor).
inline bool is_nf4(std::optional<StorageFormatId> f) {
  return f && (*f == StorageFormatId::nf4 || *f == StorageFormatId::nf4_dq);
}

struct StorageFormat {
  std::string name;         // "fp32", "bf16", "nf4", ...
  ElementCost cost;         // bytes per element, block constants included
  std::string description;  // one line: what the bytes are made of
  StorageFormatId id = StorageFormatId::fp32;
};

// The formats memplan knows: fp64 fp32 tf32 fp16 bf16 fp8-e4m3 fp8-e5m2 int8 int4 nf4
// (plus the nf4 variants nf4-dq), ggml's q8_0 and q4_0 blocks (a KV cache in llama.cpp),
// gptq-4bit and awq-4bit (group size 128), mxfp4 (OCP microscaling FP4). tf32 is stored as fp32 (4 bytes).
const std::vector<StorageFormat>& storage_formats();

// By name (case-insensitive, "float16"/"half"/"bfloat16"/"float32" accepted), or Error naming
// `subject` with "did you mean".
const StorageFormat& find_storage_format(std::string_view subject, std::string_view name);

// The format of an id (no parsing, never throws).
const StorageFormat& storage_format(StorageFormatId id);

// Bytes of `elements` numbers at `cost`, rounded up, overflow-checked.
uint64_t bytes_for(uint64_t elements, ElementCost cost, const char* what = "bytes");

}  // namespace memplan
