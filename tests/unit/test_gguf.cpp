// GGUF headers built byte by byte: exact bytes per quantised type, architecture from the
// metadata, and the malformed cases, each a memplan::Error naming the file (and tensor).
#include <catch2/catch.hpp>

#include <memplan/error.hpp>
#include "core/models/gguf.hpp"

#include "model_file_builders.hpp"

using namespace memplan;
using namespace memplan::test;

namespace {

// The key/values of a tiny llama: 9 of them.
GgufBytes tiny_kv() {
  GgufBytes kv;
  std::vector<std::string> tokens;
  for (int i = 0; i < 100; ++i) tokens.push_back("tok" + std::to_string(i));
  kv.kv_str("general.architecture", "llama")
      .kv_str("general.name", "tiny")
      .kv_u32("llama.block_count", 1)
      .kv_u32("llama.embedding_length", 256)
      .kv_u32("llama.attention.head_count", 4)
      .kv_u32("llama.attention.head_count_kv", 2)
      .kv_u32("llama.feed_forward_length", 512)
      .kv_f32("llama.attention.layer_norm_rms_epsilon", 1e-5f)
      .kv_strings("tokenizer.ggml.tokens", tokens);
  return kv;
}

const std::vector<GgTensor> k_tiny_tensors = {
    {"token_embd.weight", {256, 100}, 12},      // Q4_K: 25,600 / 256 = 100 blocks x 144 = 14,400 B
    {"blk.0.attn_q.weight", {256, 256}, 8},     // Q8_0: 65,536 / 32 = 2,048 blocks x 34 = 69,632 B
    {"blk.0.attn_k.weight", {256, 128}, 30},    // BF16: 32,768 x 2 = 65,536 B
    {"blk.0.ffn_gate.weight", {256, 512}, 14},  // Q6_K: 131,072 / 256 = 512 x 210 = 107,520 B
    {"blk.0.ffn_up.weight", {256, 512}, 16},    // IQ2_XXS: 512 blocks x 66 = 33,792 B
    {"blk.0.ffn_down.weight", {64, 2}, 2},      // Q4_0: 128 / 32 = 4 blocks x 18 = 72 B
    {"blk.0.attn_norm.weight", {256}, 0},       // F32: 1,024 B
    {"output_norm.weight", {256}, 0},           // F32: 1,024 B
    {"output.weight", {256, 100}, 1},           // F16: 51,200 B
};

std::string error_of(const std::string& bytes) {
  try {
    parse_gguf(bytes, bytes.size(), "m.gguf");
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

// Header + one kv (given raw), no tensors.
std::string one_kv(const GgufBytes& kv) { return gguf_file(kv, 1, {}); }

}  // namespace

TEST_CASE("gguf: exact bytes per quantised type and the architecture", "[gguf]") {
  std::string bytes = gguf_file(tiny_kv(), 9, k_tiny_tensors);
  GgufFile g = parse_gguf(bytes, bytes.size(), "m.gguf");
  CHECK(g.version == 3);
  CHECK(g.alignment == 32);
  REQUIRE(g.tensors.size() == 9);
  CHECK(g.tensors[0].bytes == 14400);
  CHECK(g.tensors[1].bytes == 69632);
  CHECK(g.tensors[2].bytes == 65536);
  CHECK(g.tensors[3].bytes == 107520);
  CHECK(g.tensors[4].bytes == 33792);
  CHECK(g.tensors[5].bytes == 72);
  CHECK(g.metadata["tokenizer.ggml.tokens"]["length"] == 100);  // long arrays are summarised
  CHECK(g.data_end == bytes.size());

  ModelSpec m = model_spec_of(g);
  // 14,400 + 69,632 + 65,536 + 107,520 + 33,792 + 72 + 1,024 + 1,024 + 51,200 = 344,200 bytes.
  CHECK(m.weight_bytes == 344200);
  // 25,600 + 65,536 + 32,768 + 131,072 + 131,072 + 128 + 256 + 256 + 25,600 = 412,288 elements.
  CHECK(m.parameters == 412288);
  CHECK(m.tensors == 9);
  CHECK(m.name == "tiny");
  CHECK(m.weight_format.empty());  // a mix of quantised types
  REQUIRE(m.arch);
  CHECK(m.arch->model_type == "llama");
  CHECK(m.arch->layers == 1);
  CHECK(m.arch->hidden == 256);
  CHECK(m.arch->heads == 4);
  CHECK(m.arch->kv_heads == 2);
  CHECK(m.arch->intermediate == 512);
  CHECK(m.arch->vocab == 100);
  CHECK(m.arch->norm == "rmsnorm");
  CHECK(m.arch->gated_mlp);
  CHECK(m.arch->activation == "silu");
  CHECK_FALSE(m.arch->tied_embeddings);  // output.weight is present

  std::vector<GgufTypeTotal> t = gguf_type_totals(g);
  CHECK(t.front().type == "Q6_K");
  CHECK(t.front().bytes == 107520);
}

TEST_CASE("gguf: one unquantised type becomes the weight format, MoE active parameters", "[gguf]") {
  GgufBytes kv;
  kv.kv_str("general.architecture", "mixtral")
      .kv_u32("mixtral.expert_count", 4)
      .kv_u32("mixtral.expert_used_count", 1)
      .kv_u32("general.alignment", 64);
  std::string bytes =
      gguf_file(kv, 4, {{"token_embd.weight", {32, 10}, 1}, {"blk.0.ffn_up_exps.weight", {32, 8, 4}, 1}}, 64);
  GgufFile g = parse_gguf(bytes, bytes.size(), "m.gguf");
  CHECK(g.alignment == 64);
  ModelSpec m = model_spec_of(g);
  CHECK(m.weight_format == "fp16");
  CHECK(m.parameters == 320 + 1024);
  // 3 of the 4 experts idle per token: 1024 x 3/4 = 768 parameters not used.
  CHECK(m.active_parameters == 320 + 1024 - 768);
  CHECK(m.arch->tied_embeddings);  // no output.weight
}

TEST_CASE("gguf: a header larger than the first read is read in full", "[gguf]") {
  GgufBytes kv;
  std::vector<std::string> tokens(200000, "abcdefgh");  // 200,000 x 16 bytes = 3.2 MB of metadata
  kv.kv_str("general.architecture", "llama").kv_strings("tokenizer.ggml.tokens", tokens);
  std::string bytes = gguf_file(kv, 2, {{"output_norm.weight", {8}, 0}});
  CHECK_THROWS_AS(parse_gguf(bytes.substr(0, 1 << 20), bytes.size(), "m.gguf"), GgufNeedMore);
  TempDir dir("gguf_big");
  ModelSpec m = read_gguf(dir.write("m.gguf", bytes));
  CHECK(m.parameters == 8);
  CHECK(m.arch->vocab == 200000);
}

TEST_CASE("gguf: malformed files are clear errors", "[gguf]") {
  std::string good = gguf_file(tiny_kv(), 9, k_tiny_tensors);
  CHECK(error_of("GGU") ==
        "m.gguf: truncated at byte 0 while reading the magic (4 bytes needed, the file has 3)");
  CHECK(error_of("GGML" + good.substr(4)) == "m.gguf: is not a GGUF file (it does not start with \"GGUF\")");
  GgufBytes v1;
  v1.u32(0x46554747).u32(1).u32(0).u32(0);
  CHECK(error_of(v1.b) ==
        "m.gguf: is GGUF version 1 (32-bit counts), which memplan does not read; re-convert it");
  GgufBytes be;
  be.u32(0x46554747).u32(0x03000000).u64(0).u64(0);
  CHECK(error_of(be.b).find("big-endian") != std::string::npos);
  GgufBytes v4;
  v4.u32(0x46554747).u32(4).u64(0).u64(0);
  CHECK(error_of(v4.b) == "m.gguf: is GGUF version 4 (memplan reads versions 2 and 3)");
  // Truncated inside the metadata.
  GgufBytes trunc;
  trunc.u32(0x46554747).u32(3).u64(0).u64(1).u64(20);
  trunc.b += "abcdefghij";
  CHECK(error_of(trunc.b) ==
        "m.gguf: truncated at byte 32 while reading metadata key 0 (20 bytes needed, the file has 42)");
  CHECK(error_of(good.substr(0, 200)).find("m.gguf: ") == 0);
  // Counts no file could hold.
  GgufBytes huge;
  huge.u32(0x46554747).u32(3).u64(1ull << 63).u64(0);
  CHECK(error_of(huge.b) ==
        "m.gguf: tensor count 9,223,372,036,854,775,808 cannot fit in the 0 bytes left in the file");
  GgufBytes longstr;
  longstr.u32(0x46554747).u32(3).u64(0).u64(1).u64(1ull << 63).u64(0);
  CHECK(error_of(longstr.b) ==
        "m.gguf: metadata key 0 is 9,223,372,036,854,775,808 bytes long (at most 65,535)");
  GgufBytes badtype;
  badtype.str("k").u32(13);
  CHECK(error_of(one_kv(badtype)) == "m.gguf: metadata \"k\" has unknown value type 13");
  GgufBytes nested;
  nested.str("k").u32(9).u32(9).u64(1);
  CHECK(error_of(one_kv(nested)) ==
        "m.gguf: metadata \"k\" is an array of arrays (not supported, as in ggml)");
  GgufBytes align;
  align.kv_u32("general.alignment", 48);
  CHECK(error_of(one_kv(align)) == "m.gguf: general.alignment 48 is not a power of 2");
  GgufBytes dup;
  dup.kv_u32("a", 1).kv_u32("a", 2);
  CHECK(error_of(gguf_file(dup, 2, {})) == "m.gguf: metadata key \"a\" appears twice");
  GgufBytes none;
  CHECK(error_of(gguf_file(none, 0, {{"t", {100, 2}, 12}})) ==
        "m.gguf: tensor \"t\": rows of 100 are not a multiple of Q4_K's block of 256");
  CHECK(error_of(gguf_file(none, 0, {{"t", {8}, 4}})) ==
        "m.gguf: tensor \"t\": unknown ggml type 4 (a newer llama.cpp type?)");
  CHECK(error_of(gguf_file(none, 0, {{"t", {1, 1, 1, 1, 1}, 0}})) ==
        "m.gguf: tensor \"t\": 5 dimensions (at most 4)");
  CHECK(error_of(gguf_file(none, 0, {{"t", {1ull << 62, 4}, 0}})) ==
        "m.gguf: tensor \"t\": shape has more than 2^63 elements");
  CHECK(error_of(gguf_file(none, 0, {{"t", {8}, 0}, {"t", {8}, 0}})) ==
        "m.gguf: tensor \"t\": appears twice");
  CHECK(error_of(gguf_file(none, 0, {{std::string(64, 'n'), {8}, 0}})) ==
        "m.gguf: tensor 0 name is 64 bytes long (at most 63)");
  // Issue 13: a 500 MB name was read in full before its length was checked; now the length
  // alone is refused (the file need not hold the name).
  GgufBytes long_name;
  long_name.u32(0x46554747).u32(3).u64(1).u64(0).u64(500000000).b += std::string(64, 'x');
  CHECK(error_of(long_name.b) == "m.gguf: tensor 0 name is 500,000,000 bytes long (at most 63)");
  // A name's raw bytes are shown escaped, never sent to the terminal as they are.
  CHECK(error_of(gguf_file(none, 0, {{std::string("a\xff\0b", 4), {1, 1, 1, 1, 1}, 0}})) ==
        "m.gguf: tensor \"a\\xFF\\x00b\": 5 dimensions (at most 4)");
  // Data cut short: the last tensor runs past the end of the file.
  std::string cut = good.substr(0, good.size() - 10);
  CHECK(error_of(cut).find("m.gguf: tensor \"output.weight\": its 51,200 bytes at data offset") == 0);
  // Offsets out of sequence (the second tensor claims offset 0 again).
  GgufBytes g;
  g.u32(0x46554747).u32(3).u64(2).u64(0).tensor_info("a", {8}, 0, 0).tensor_info("b", {8}, 0, 0).pad(32);
  g.b += std::string(64, '\0');
  CHECK(error_of(g.b) == "m.gguf: tensor \"b\": offset 0 is not where the previous tensor ends (32)");
}
