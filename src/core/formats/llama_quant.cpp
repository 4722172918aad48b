// llama.cpp's file types and llama-quantize's per-tensor choice of ggml type (the rules of
// llama_tensor_get_type_impl in llama.cpp's src/llama-quant.cpp, restated as tables and tests).
#include "core/formats/llama_quant.hpp"

#include <algorithm>

#include <memplan/error.hpp>
#include "core/base/did_you_mean.hpp"
#include "core/base/text.hpp"

namespace memplan {

const std::vector<LlamaFtype>& llama_ftypes() {
  // Ids and default types: include/llama.h (enum llama_ftype) and llama_ftype_get_default_type.
  static const std::vector<LlamaFtype> table = {
      {0, "f32", "F32", "every matrix fp32"},
      {1, "f16", "F16", "every matrix fp16"},
      {32, "bf16", "BF16", "every matrix bf16"},
      {7, "q8_0", "Q8_0", "8-bit blocks of 32 (34 bytes), output q8_0"},
      {2, "q4_0", "Q4_0", "4-bit blocks of 32 (18 bytes), output q6_k"},
      {3, "q4_1", "Q4_1", "4-bit blocks of 32 with a minimum (20 bytes), output q6_k"},
      {8, "q5_0", "Q5_0", "5-bit blocks of 32 (22 bytes), output q6_k"},
      {9, "q5_1", "Q5_1", "5-bit blocks of 32 with a minimum (24 bytes), output q6_k"},
      {10, "q2_k", "Q2_K", "2-bit k-quant; attn_v q3_k/q4_k, ffn_down q3_k, attn_output q3_k"},
      {21, "q2_k_s", "Q2_K", "2-bit k-quant, small mix"},
      {11, "q3_k_s", "Q3_K", "3-bit k-quant, small mix"},
      {12, "q3_k_m", "Q3_K", "3-bit k-quant; attn_v q5_k/q4_k, ffn_down q5_k/q4_k, attn_output q4_k"},
      {13, "q3_k_l", "Q3_K", "3-bit k-quant; attn_v, ffn_down and attn_output q5_k"},
      {14, "q4_k_s", "Q4_K", "4-bit k-quant (144 bytes per 256), small mix"},
      {15, "q4_k_m", "Q4_K", "4-bit k-quant; half of attn_v and ffn_down q6_k, output q6_k"},
      {16, "q5_k_s", "Q5_K", "5-bit k-quant (176 bytes per 256), small mix"},
      {17, "q5_k_m", "Q5_K", "5-bit k-quant; half of attn_v and ffn_down q6_k"},
      {18, "q6_k", "Q6_K", "6-bit k-quant (210 bytes per 256)"},
      {30, "iq4_xs", "IQ4_XS", "4.25-bit i-quant (136 bytes per 256)"},
      {25, "iq4_nl", "IQ4_NL", "4.5-bit non-linear blocks of 32"},
      {27, "iq3_m", "IQ3_S", "3.4-bit i-quant, medium mix"},
      {26, "iq3_s", "IQ3_S", "3.4-bit i-quant"},
      {22, "iq3_xs", "IQ3_S", "3.3-bit i-quant mix"},
      {23, "iq3_xxs", "IQ3_XXS", "3.06-bit i-quant"},
      {29, "iq2_m", "IQ2_S", "2.7-bit i-quant mix"},
      {28, "iq2_s", "IQ2_XS", "2.5-bit i-quant mix"},
      {20, "iq2_xs", "IQ2_XS", "2.31-bit i-quant"},
      {19, "iq2_xxs", "IQ2_XXS", "2.06-bit i-quant"},
      {31, "iq1_m", "IQ1_M", "1.75-bit i-quant"},
      {24, "iq1_s", "IQ1_S", "1.56-bit i-quant"},
      {36, "tq1_0", "TQ1_0", "ternary 1.69-bit"},
      {37, "tq2_0", "TQ2_0", "ternary 2.06-bit"},
      {38, "mxfp4_moe", "MXFP4", "experts mxfp4, the rest q8_0"},
  };
  return table;
}

const LlamaFtype* find_llama_ftype(std::string_view name) {
  const std::string key = to_lower(name);
  for (const LlamaFtype& f : llama_ftypes())
    if (key == f.name) return &f;
  return nullptr;
}

const LlamaFtype* llama_ftype(uint32_t id) {
  for (const LlamaFtype& f : llama_ftypes())
    if (f.id == id) return &f;
  return nullptr;
}

namespace {

// llama.cpp's use_more_bits: the first and last eighth of the layers, and every third between.
bool more_bits(int64_t i, int64_t n) { return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2; }

bool is(const LlamaFtype& f, std::initializer_list<const char*> names) {
  return std::any_of(names.begin(), names.end(),
                     [&](const char* n) { return std::string_view(f.name) == n; });
}

bool very_low_bit(const LlamaFtype& f) {
  return is(f, {"iq2_xxs", "iq2_xs", "iq1_s", "iq2_s", "iq2_m", "iq1_m"});
}

std::string attn_v_type(const LlamaFtype& f, const QuantModelFacts& m, int64_t i, int64_t n, std::string t) {
  const bool gqa4 = m.gqa >= 4;
  if (is(f, {"q2_k"}))
    t = gqa4 ? "Q4_K" : "Q3_K";
  else if (is(f, {"q2_k_s"}) && gqa4)
    t = "Q4_K";
  else if (is(f, {"iq3_xxs"}))
    t = gqa4 ? "Q4_K" : !m.imatrix ? "IQ3_S" : "IQ3_XXS";
  else if (is(f, {"iq3_xs", "iq3_s"}) && gqa4)
    t = "Q4_K";
  else if (is(f, {"iq3_m"}))
    t = "Q4_K";
  else if (is(f, {"q3_k_m"}))
    t = i < 2 ? "Q5_K" : "Q4_K";
  else if (is(f, {"q3_k_l"}))
    t = "Q5_K";
  else if (is(f, {"iq4_nl", "iq4_xs"}) && gqa4)
    t = "Q5_K";
  else if (is(f, {"q4_k_m", "q5_k_m"}) && more_bits(i, n))
    t = "Q6_K";
  else if (is(f, {"q4_k_s"}) && i < 4)
    t = "Q5_K";
  if (m.size_70b && (t == "Q3_K" || t == "Q4_K")) t = "Q5_K";
  if (m.experts == 8) t = "Q8_0";
  return t;
}

std::string ffn_down_type(const LlamaFtype& f, const QuantModelFacts& m, int64_t i, int64_t n,
                          std::string t) {
  if (is(f, {"q2_k"})) return "Q3_K";
  if (is(f, {"q2_k_s"})) return i < n / 8 ? "Q4_K" : t;
  if (is(f, {"iq3_xxs"}) && !m.imatrix) return i < n / 8 ? "Q4_K" : "Q3_K";
  if (is(f, {"q3_k_m"})) return i < n / 16 ? "Q5_K" : !m.falcon || more_bits(i, n) ? "Q4_K" : "Q3_K";
  if (is(f, {"iq3_m"}) && (i < n / 8 || (m.experts == 8 && more_bits(i, n)))) return "Q4_K";
  if (is(f, {"q3_k_l"})) return m.falcon ? "Q4_K" : "Q5_K";
  if (is(f, {"q4_k_m"})) {
    if (m.falcon) return i < n / 16 ? "Q6_K" : more_bits(i, n) ? "Q5_K" : "Q4_K";
    return more_bits(i, n) ? "Q6_K" : t;
  }
  if (i < n / 8 && is(f, {"iq4_nl", "iq4_xs"}) && !m.imatrix) return "Q5_K";
  if (is(f, {"q5_k_m"}) && more_bits(i, n)) return "Q6_K";
  if (is(f, {"q4_k_s"}) && !m.falcon && i < n / 8) return "Q5_K";
  if (is(f, {"q4_0", "q5_0"}) && m.imatrix && i < n / 8) return is(f, {"q4_0"}) ? "Q4_1" : "Q5_1";
  return t;
}

std::string attn_output_type(const LlamaFtype& f, const QuantModelFacts& m, std::string t) {
  if (m.falcon) return is(f, {"q3_k_l"}) ? "Q4_K" : t;
  if (m.experts == 8)
    return is(f, {"q2_k", "iq3_xs", "iq3_xxs", "q3_k_s", "q3_k_m", "iq4_nl", "q4_k_s", "q4_k_m", "iq3_s",
                  "iq3_m", "iq4_xs"})
               ? "Q5_K"
               : t;
  if (is(f, {"q2_k"})) return "Q3_K";
  if (is(f, {"iq3_xxs"})) return "IQ3_S";
  if (is(f, {"q3_k_m", "iq3_m"})) return "Q4_K";
  if (is(f, {"q3_k_l"})) return "Q5_K";
  return t;
}

// The mixes below 3 bits per weight (IQ1/IQ2) have their own branch.
std::string very_low_bit_type(const LlamaFtype& f, const QuantModelFacts& m, TensorRole role, int64_t i,
                              int64_t n, std::string t) {
  const bool s_or_m = is(f, {"iq2_s", "iq2_m"});
  if (role == TensorRole::attn_v || role == TensorRole::attn_qkv)
    return m.gqa >= 4 || m.experts >= 4 ? "Q4_K" : s_or_m ? "IQ3_S" : "Q2_K";
  if (m.experts == 8 && role == TensorRole::attn_k) return "Q4_K";
  if (role == TensorRole::ffn_down) return i < n / 8 ? (s_or_m ? "IQ3_S" : "Q2_K") : t;
  if (role == TensorRole::attn_output) {
    if (m.experts == 8) return "Q5_K";
    if (is(f, {"iq1_s", "iq1_m"})) return "IQ2_XXS";
    if (s_or_m) return "IQ3_S";
  }
  return t;
}

}  // namespace

std::string llama_tensor_type(const LlamaFtype& f, const QuantModelFacts& m, TensorRole role,
                              uint64_t layer) {
  std::string t = f.default_type;
  if (t == "F32" || t == "F16" || t == "BF16") return t;  // not a quantised type: no mix
  const int64_t i = static_cast<int64_t>(layer);
  const int64_t n = static_cast<int64_t>(m.layers);
  const bool output = role == TensorRole::output || (m.tied_embeddings && role == TensorRole::token_embd);
  if (output) {
    if (is(f, {"mxfp4_moe"}) || m.falcon) return "Q8_0";
    if (is(f, {"iq2_xxs", "iq2_xs", "iq3_xxs", "iq1_s", "iq2_s", "iq2_m", "iq1_m"})) return "Q5_K";
    return t == "Q8_0" ? t : "Q6_K";
  }
  if (is(f, {"mxfp4_moe"})) return "Q8_0";  // the expert tensors are picked by the caller
  if (role == TensorRole::token_embd) {
    if (is(f, {"iq2_xxs", "iq2_xs", "iq1_s", "iq1_m"})) return "Q2_K";
    if (is(f, {"iq2_s", "iq2_m", "iq3_xxs"})) return "IQ3_S";
    if (is(f, {"tq1_0", "tq2_0"})) return "Q4_K";
    return t;
  }
  if (very_low_bit(f)) return very_low_bit_type(f, m, role, i, n, t);
  switch (role) {
    case TensorRole::attn_v:
    case TensorRole::attn_qkv:
      return attn_v_type(f, m, i, n, t);
    case TensorRole::attn_k:
      if (m.experts == 8) return "Q8_0";
      if (is(f, {"iq3_xs"})) return "IQ3_XXS";
      if (is(f, {"iq3_xxs"})) return "IQ2_S";
      return t;
    case TensorRole::attn_q:
      if (is(f, {"iq3_xs"})) return "IQ3_XXS";
      if (is(f, {"iq3_xxs"})) return "IQ2_S";
      return t;
    case TensorRole::ffn_down:
      return ffn_down_type(f, m, i, n, t);
    case TensorRole::attn_output:
      return attn_output_type(f, m, t);
    case TensorRole::ffn_gate:
    case TensorRole::ffn_up:
      if (is(f, {"iq3_xs"}) && i >= n / 8 && i < 7 * n / 8) return "IQ3_XXS";
      return t;
    default:
      return t;
  }
}

const StorageFormat& find_quantize_format(std::string_view subject, std::string_view name) {
  try {
    return find_storage_format(subject, name);
  } catch (const Error&) {
    std::vector<std::string> names;
    for (const StorageFormat& f : storage_formats()) names.push_back(f.name);
    for (const LlamaFtype& f : llama_ftypes()) names.push_back(f.name);
    throw Error(std::string(subject),
                "\"" + std::string(name) +
                    "\" is not a number format or llama.cpp file type (expected int8, int4, nf4, nf4-dq, "
                    "fp8, gptq-4bit, awq-4bit, or a "
                    "llama.cpp file type: q8_0, q6_k, q5_k_m, q4_k_m, q4_0, iq4_xs, q3_k_m, q2_k, ..." +
                    did_you_mean(name, names) + ")");
  }
}

std::string llama_fallback_type(const std::string& type) {
  static const std::pair<const char*, const char*> table[] = {
      {"IQ1_S", "IQ4_NL"}, {"IQ1_M", "IQ4_NL"},   {"IQ2_XXS", "IQ4_NL"}, {"IQ2_XS", "IQ4_NL"},
      {"IQ2_S", "IQ4_NL"}, {"IQ3_XXS", "IQ4_NL"}, {"IQ3_S", "IQ4_NL"},   {"IQ4_XS", "IQ4_NL"},
      {"Q2_K", "Q4_0"},    {"Q3_K", "Q4_0"},      {"TQ1_0", "Q4_0"},     {"TQ2_0", "Q4_0"},
      {"Q4_K", "Q5_0"},    {"Q5_K", "Q5_1"},      {"Q6_K", "Q8_0"}};
  for (const auto& [from, to] : table)
    if (type == from) return to;
  return "F16";
}

}  // namespace memplan
