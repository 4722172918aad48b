#include <memplan/storage_format.hpp>
#include "core/base/text.hpp"

#include <cctype>

#include <memplan/error.hpp>
#include "core/base/checked.hpp"
#include "core/base/did_you_mean.hpp"

namespace memplan {

const std::vector<StorageFormat>& storage_formats() {
  // nf4 (bitsandbytes): 4-bit codes plus one fp32 absmax per 64-element block = 4.5 bits.
  // nf4-dq (double quantisation, QLoRA's default): absmax quantised to 8 bits per 64-block plus
  // one fp32 constant per 256 of those = 4 + 8/64 + 32/(64*256) bits = 67616/16384 bits.
  static const std::vector<StorageFormat> table = {
      {"fp64", {8, 1}, "IEEE binary64: 8 bytes", StorageFormatId::fp64},
      {"fp32", {4, 1}, "IEEE binary32: 4 bytes", StorageFormatId::fp32},
      {"tf32", {4, 1}, "TensorFloat-32: a compute mode; stored as fp32, 4 bytes", StorageFormatId::tf32},
      {"fp16", {2, 1}, "IEEE binary16: 2 bytes", StorageFormatId::fp16},
      {"bf16", {2, 1}, "bfloat16: 2 bytes", StorageFormatId::bf16},
      {"fp8-e4m3",
       {1, 1},
       "OCP FP8 E4M3: 1 byte (plus per-tensor scales, negligible)",
       StorageFormatId::fp8_e4m3},
      {"fp8-e5m2",
       {1, 1},
       "OCP FP8 E5M2: 1 byte (plus per-tensor scales, negligible)",
       StorageFormatId::fp8_e5m2},
      {"int8",
       {1, 1},
       "8-bit integer: 1 byte (LLM.int8 keeps per-row scales, negligible)",
       StorageFormatId::int8},
      {"int4", {1, 2}, "4-bit integer: 1/2 byte (group scales not counted)", StorageFormatId::int4},
      {"nf4",
       {9, 16},
       "NormalFloat4: 4 bits + fp32 absmax per 64-element block = 4.5 bits",
       StorageFormatId::nf4},
      {"nf4-dq",
       {67616, 131072},
       "NormalFloat4, double-quantised: 4 + 8/64 + 32/16384 bits = 4.127 bits",
       StorageFormatId::nf4_dq},
      // ggml blocks (ggml-common.h): block_q8_0 = fp16 scale + 32 int8 = 34 bytes per 32;
      // block_q4_0 = fp16 scale + 16 bytes of nibbles = 18 bytes per 32.
      {"q8_0",
       {34, 32},
       "ggml Q8_0: 32 int8 + an fp16 scale = 34 bytes per 32 (8.5 bits)",
       StorageFormatId::q8_0},
      {"q4_0",
       {18, 32},
       "ggml Q4_0: 32 nibbles + an fp16 scale = 18 bytes per 32 (4.5 bits)",
       StorageFormatId::q4_0},
      // GPTQ / AWQ (AutoGPTQ, AutoAWQ packing): int4 weights packed in int32, per group of 128
      // inputs an fp16 scale and a 4-bit zero point (qzeros packed in int32) per output column:
      // 4 + 16/128 + 4/128 bits = 133/32 bits (g_idx, one int32 per input row, not counted).
      {"gptq-4bit",
       {133, 256},
       "GPTQ 4-bit, group 128: 4 + (16 + 4)/128 bits = 4.156 bits, every weight at this rate "
       "(approximate; a config.json quantization_config is counted tensor by tensor, exactly)",
       StorageFormatId::gptq_4bit},
      {"awq-4bit",
       {133, 256},
       "AWQ 4-bit, group 128: 4 + (16 + 4)/128 bits = 4.156 bits, every weight at this rate "
       "(approximate; a config.json quantization_config is counted tensor by tensor, exactly)",
       StorageFormatId::awq_4bit},
      // OCP Microscaling MXFP4 (gpt-oss experts): 32 E2M1 codes (16 bytes) share one E8M0 scale byte.
      {"mxfp4",
       {17, 32},
       "OCP MXFP4: 4-bit E2M1 + one 8-bit scale per 32 elements = 4.25 bits",
       StorageFormatId::mxfp4},
  };
  return table;
}

const StorageFormat& find_storage_format(std::string_view subject, std::string_view name) {
  std::string key = to_lower(name);
  static const std::pair<const char*, const char*> aliases[] = {
      {"float64", "fp64"},  {"double", "fp64"},   {"float32", "fp32"},      {"float", "fp32"},
      {"float16", "fp16"},  {"half", "fp16"},     {"bfloat16", "bf16"},     {"fp8", "fp8-e4m3"},
      {"e4m3", "fp8-e4m3"}, {"e5m2", "fp8-e5m2"}, {"fp8_e4m3", "fp8-e4m3"}, {"fp8_e5m2", "fp8-e5m2"}};
  for (const auto& [from, to] : aliases)
    if (key == from) key = to;
  std::vector<std::string> names;
  for (const StorageFormat& f : storage_formats()) {
    if (f.name == key) return f;
    names.push_back(f.name);
  }
  throw Error(
      std::string(subject),
      "\"" + std::string(name) +
          "\" is not a number format (expected one of fp32, fp16, bf16, fp8-e4m3, fp8-e5m2, int8, int4, nf4" +
          did_you_mean(name, names) + ")");
}

const StorageFormat& storage_format(StorageFormatId id) {
  return storage_formats()[static_cast<size_t>(id)];  // the table is in the order of the enum
}

uint64_t bytes_for(uint64_t elements, ElementCost cost, const char* what) {
  return checked_mul_ratio(elements, cost.num, cost.den, what);
}

}  // namespace memplan
