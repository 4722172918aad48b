// safetensors headers built byte by byte: totals per dtype, sharded models, and every malformed
// case the reader validates, each a memplan::Error naming the file (and tensor).
#include <catch2/catch.hpp>

#include <memplan/error.hpp>
#include "core/models/safetensors.hpp"

#include "model_file_builders.hpp"

using namespace memplan;
using namespace memplan::test;

namespace {

std::string parse_error(const std::string& bytes) {
  try {
    parse_safetensors_header(bytes, bytes.size(), "m.safetensors");
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

// A file whose header is exactly `header` and whose data is `data` zero bytes.
std::string raw_error(const std::string& header, uint64_t data) { return parse_error(st_raw(header, data)); }

}  // namespace

TEST_CASE("safetensors: counts elements and bytes per dtype", "[safetensors]") {
  TempDir dir("st_single");
  // Written in a different key order than the data order, as older writers did.
  std::string path = dir.write(
      "model.safetensors",
      st_file({
          {"model.embed_tokens.weight", "BF16", {10, 8}},                // 80 elements, 160 bytes
          {"model.norm.weight", "F32", {8}},                             // 8 elements, 32 bytes
          {"model.layers.0.self_attn.rotary_emb.inv_freq", "F32", {4}},  // a buffer: 4 elements, 16 bytes
          {"lm_head.weight", "BF16", {10, 8}},                           // 80 elements, 160 bytes
      }));
  SafetensorsModel m = read_safetensors_model(path);
  CHECK(m.tensors == 4);
  CHECK(m.elements == 80 + 8 + 4 + 80);
  CHECK(m.bytes == 160 + 32 + 16 + 160);
  CHECK(m.parameters == 168);  // the inv_freq buffer is not a parameter
  CHECK(m.parameter_tensors == 3);
  CHECK(m.parameter_bytes == 352);
  CHECK(m.buffers.tensors == 1);
  CHECK(m.weight_format == "bf16");
  REQUIRE(m.by_dtype.size() == 2);
  CHECK(m.by_dtype[0].dtype == "BF16");
  CHECK(m.by_dtype[0].elements == 160);
  CHECK(m.by_dtype[0].bytes == 320);
  CHECK(m.by_dtype[1].dtype == "F32");
  CHECK(m.by_dtype[1].tensors == 2);

  ModelSpec s = read_safetensors(path);
  CHECK(s.parameters == 168);
  CHECK(s.tensors == 3);
  CHECK(s.weight_format == "bf16");
  CHECK(s.weight_bytes == 352);
  CHECK_FALSE(s.arch);  // no config.json next to it
}

TEST_CASE("safetensors: every dtype of the format is read with its size", "[safetensors]") {
  // bits per element from the README: 64 F64 I64 U64 C64, 32 F32 I32, 16 F16 BF16 I16,
  // 8 I8 U8 BOOL F8_E4M3 F8_E5M2, 4 F4 (two per byte).
  const std::pair<const char*, uint64_t> cases[] = {
      {"F64", 8}, {"F32", 4}, {"F16", 2},  {"BF16", 2},    {"I64", 8},     {"I32", 4}, {"I16", 2},
      {"I8", 1},  {"U8", 1},  {"BOOL", 1}, {"F8_E4M3", 1}, {"F8_E5M2", 1}, {"U64", 8}, {"C64", 8}};
  for (const auto& [dtype, bytes] : cases) {
    INFO(dtype);
    std::string f = st_file({{"t", dtype, {3, 5}}});
    SafetensorsHeader h = parse_safetensors_header(f, f.size(), "m.safetensors");
    REQUIRE(h.tensors.size() == 1);
    CHECK(h.tensors[0].elements == 15);
    CHECK(h.tensors[0].bytes() == 15 * bytes);
  }
  std::string f4 = st_file({{"t", "F4", {4, 6}}});  // 24 x 4 bits = 12 bytes
  CHECK(parse_safetensors_header(f4, f4.size(), "m").tensors[0].bytes() == 12);
}

TEST_CASE("safetensors: metadata, padding, scalars and empty tensors", "[safetensors]") {
  std::string f =
      st_file({{"scalar", "F32", {}}, {"empty", "F16", {0, 4}}, {"w", "F16", {2}}}, R"({"format":"pt"})");
  SafetensorsHeader h = parse_safetensors_header(f, f.size(), "m.safetensors");
  CHECK(h.metadata.at("format") == "pt");
  CHECK(h.header_length % 8 == 0);  // the builder pads with spaces, as the reference writer does
  REQUIRE(h.tensors.size() == 3);
  CHECK(h.data_bytes == 4 + 0 + 4);
}

TEST_CASE("safetensors: malformed headers are clear errors", "[safetensors]") {
  CHECK(parse_error("abc") ==
        "m.safetensors: is 3 bytes, too short for a safetensors file (8-byte header length first)");
  CHECK(parse_error(le64(100) + "{}") ==
        "m.safetensors: header length 100 runs past the end of the file (10 bytes)");
  CHECK(parse_error(le64(1ull << 63) + "{}") ==
        "m.safetensors: header length 9,223,372,036,854,775,808 is larger than the 100,000,000-byte limit "
        "(not a safetensors file?)");
  CHECK(parse_error(le64(UINT64_MAX)).find("is larger than the 100,000,000-byte limit") != std::string::npos);
  CHECK(parse_error(le64(0)) == "m.safetensors: header length is 0 (expected a JSON header)");
  CHECK(raw_error("{\"a\": ", 0).find("m.safetensors: the safetensors header is not valid JSON") == 0);
  CHECK(raw_error("not json", 0) ==
        "m.safetensors: the header does not start with '{' (not a safetensors file?)");
  // Issue 13: tensor names are echoed bounded and printable (here 100,000 bytes).
  const std::string huge = raw_error("{\"" + std::string(100000, 'n') + "\": {\"dtype\": 7}}", 0);
  CHECK(huge.size() < 300);
  CHECK(huge.find("m.safetensors: tensor \"" + std::string(100, 'n') + "...\"") == 0);
  CHECK(raw_error("{\"__metadata__\": {\"n\": 1}}", 0) ==
        "m.safetensors: __metadata__ \"n\" is 1, not a string");
  CHECK(raw_error(R"({"w": {"dtype": "F17", "shape": [1], "data_offsets": [0, 2]}})", 2) ==
        "m.safetensors: tensor \"w\": unknown dtype \"F17\" (expected one of F64, F32, F16, BF16, F8_E4M3, "
        "I64, I32, "
        "I8, U8, BOOL, ...); did you mean \"F16\"?");
  CHECK(raw_error(R"({"w": {"dtype": "F16", "shape": [-1, 2], "data_offsets": [0, 4]}})", 4) ==
        "m.safetensors: tensor \"w\": shape value -1 is negative (expected whole numbers >= 0)");
  CHECK(raw_error(R"({"w": {"dtype": "F16", "shape": [1.5], "data_offsets": [0, 4]}})", 4) ==
        "m.safetensors: tensor \"w\": shape value 1.5 is not a whole number (expected whole numbers >= 0)");
  CHECK(raw_error(R"({"w": {"dtype": "F16", "shape": ["2"], "data_offsets": [0, 4]}})", 4) ==
        "m.safetensors: tensor \"w\": shape value \"2\" is not a number (expected whole numbers >= 0)");
  CHECK(
      raw_error(
          R"({"w": {"dtype": "F16", "shape": [4294967296, 4294967296, 4294967296], "data_offsets": [0, 4]}})",
          4) ==
      "m.safetensors: tensor \"w\": shape [4294967296,4294967296,4294967296] has more than 2^64 elements");
  CHECK(raw_error(R"({"w": {"dtype": "F16", "shape": [2], "data_offsets": [0]}})", 4) ==
        "m.safetensors: tensor \"w\": data_offsets [0] is not [begin, end]");
  CHECK(raw_error(R"({"w": {"dtype": "F16", "shape": [2]}})", 4) ==
        "m.safetensors: tensor \"w\": has no data_offsets");
  CHECK(raw_error(R"({"w": {"dtype": "F16", "shape": [2], "data_offsets": [4, 0]}})", 4) ==
        "m.safetensors: tensor \"w\": data_offsets [4, 0] end before they begin");
  CHECK(raw_error(R"({"w": {"dtype": "F16", "shape": [3], "data_offsets": [0, 4]}})", 4) ==
        "m.safetensors: tensor \"w\": data_offsets [0, 4] hold 4 bytes but shape [3] of F16 needs 6");
  CHECK(raw_error(R"({"w": {"dtype": "F4", "shape": [3], "data_offsets": [0, 2]}})", 2) ==
        "m.safetensors: tensor \"w\": shape [3] of F4 is 12 bits, not a whole number of bytes");
  // Overlap: b starts inside a.
  CHECK(raw_error(R"({"a": {"dtype": "F16", "shape": [2], "data_offsets": [0, 4]},
                      "b": {"dtype": "F16", "shape": [2], "data_offsets": [2, 6]}})",
                  6) ==
        "m.safetensors: tensor \"b\": data_offsets [2, 6] overlap tensor \"a\" (which ends at 4)");
  CHECK(raw_error(R"({"a": {"dtype": "F16", "shape": [2], "data_offsets": [0, 4]},
                      "b": {"dtype": "F16", "shape": [2], "data_offsets": [8, 12]}})",
                  12) ==
        "m.safetensors: tensor \"b\": data_offsets [8, 12] leave a gap of 4 bytes after tensor \"a\" (the "
        "data must be contiguous)");
  CHECK(raw_error(R"({"a": {"dtype": "F16", "shape": [2], "data_offsets": [0, 4]},
                      "a": {"dtype": "F16", "shape": [2], "data_offsets": [4, 8]}})",
                  8) == "m.safetensors: the safetensors header has the key \"a\" twice");
  CHECK(
      raw_error(R"({"a": {"dtype": "F16", "shape": [2], "data_offsets": [0, 4]}})", 2) ==
      "m.safetensors: tensor \"a\": data_offsets [0, 4] run past the end of the file (the data is 2 bytes)");
  CHECK(raw_error(R"({"a": {"dtype": "F16", "shape": [2], "data_offsets": [0, 4]}})", 6) ==
        "m.safetensors: the tensors end at data byte 4 but the file holds 6 data bytes (trailing bytes are "
        "not allowed)");
  CHECK(raw_error("[1, 2]", 0) ==
        "m.safetensors: the header does not start with '{' (not a safetensors file?)");
  CHECK(raw_error(R"({"a": 5})", 0) ==
        "m.safetensors: tensor \"a\": is 5, not an object with dtype, shape and data_offsets");
  // Truncated: the caller read fewer bytes than the header needs.
  std::string good = st_file({{"w", "F16", {2}}});
  CHECK_THROWS_WITH(parse_safetensors_header(good.substr(0, 12), good.size(), "m.safetensors"),
                    Catch::StartsWith("m.safetensors: the header is truncated"));
  CHECK_THROWS_WITH(parse_safetensors_header(good.substr(0, 5), good.size(), "m.safetensors"),
                    "m.safetensors: the 8-byte header length is truncated");
}

TEST_CASE("safetensors: sharded models through the index or a folder", "[safetensors]") {
  TempDir dir("st_sharded");
  dir.write("model-00001-of-00002.safetensors",
            st_file({{"embed.weight", "BF16", {100, 16}}, {"l0.weight", "BF16", {16, 16}}}));
  dir.write("model-00002-of-00002.safetensors",
            st_file({{"l1.weight", "BF16", {16, 16}}, {"norm.weight", "F32", {16}}}));
  // 1600 + 256 + 256 BF16 elements = 4224 bytes, plus 16 F32 = 64 bytes: 4288 data bytes.
  dir.write("model.safetensors.index.json", R"({"metadata": {"total_size": 4288}, "weight_map": {
      "embed.weight": "model-00001-of-00002.safetensors", "l0.weight": "model-00001-of-00002.safetensors",
      "l1.weight": "model-00002-of-00002.safetensors", "norm.weight": "model-00002-of-00002.safetensors"}})");
  SafetensorsModel m = read_safetensors_model(dir.path.string());
  CHECK(m.shards.size() == 2);
  CHECK_FALSE(m.index_file.empty());
  CHECK(m.parameters == 1600 + 256 + 256 + 16);
  CHECK(m.bytes == 4288);
  CHECK(m.tensors == 4);
  CHECK(m.notes.size() == 1);  // only the weight-format note: total_size agrees

  // The same folder without its index: every *.safetensors file.
  std::filesystem::remove(dir.file("model.safetensors.index.json"));
  SafetensorsModel f = read_safetensors_model(dir.path.string());
  CHECK(f.parameters == m.parameters);
  CHECK(f.index_file.empty());

  // An index naming a tensor its shard does not hold.
  dir.write("model.safetensors.index.json",
            R"({"weight_map": {"ghost.weight": "model-00001-of-00002.safetensors"}})");
  CHECK_THROWS_WITH(read_safetensors_model(dir.path.string()),
                    Catch::EndsWith("model.safetensors.index.json: tensor \"ghost.weight\" is mapped to "
                                    "model-00001-of-00002.safetensors, which has no such tensor"));
  // An index whose total_size disagrees: noted, the shards win.
  dir.write("model.safetensors.index.json", R"({"metadata": {"total_size": 9999}, "weight_map": {
      "embed.weight": "model-00001-of-00002.safetensors"}})");
  SafetensorsModel t = read_safetensors_model(dir.path.string());
  CHECK(t.index_total_size == 9999u);
  CHECK(t.bytes == 1600 * 2 + 256 * 2);  // the only shard listed
}

TEST_CASE("safetensors: a tensor in two shards is an error", "[safetensors]") {
  TempDir dir("st_dup");
  dir.write("a.safetensors", st_file({{"w", "F16", {2}}}));
  dir.write("b.safetensors", st_file({{"w", "F16", {2}}}));
  CHECK_THROWS_WITH(read_safetensors_model(dir.path.string()),
                    Catch::EndsWith("b.safetensors: tensor \"w\" is also in " + dir.file("a.safetensors")));
  TempDir empty("st_empty");
  CHECK_THROWS_WITH(read_safetensors_model(empty.path.string()),
                    Catch::Contains("holds no *.safetensors files"));
}

TEST_CASE("safetensors: a config.json next to the weights gives the architecture", "[safetensors]") {
  TempDir dir("st_config");
  dir.write("model.safetensors", st_file({{"w", "BF16", {4, 4}}}));
  dir.write("config.json",
            R"({"model_type": "llama", "vocab_size": 10, "hidden_size": 4, "num_hidden_layers": 1,
      "num_attention_heads": 2, "intermediate_size": 8, "torch_dtype": "bfloat16"})");
  ModelSpec s = read_safetensors(dir.path.string());
  REQUIRE(s.arch);
  CHECK(s.arch->hidden == 4);
  CHECK(s.parameters == 16);  // the headers, not the config's count
  CHECK(s.weight_format == "bf16");
}

TEST_CASE("safetensors index: malformed files", "[safetensors]") {
  auto err = [](const std::string& text) {
    try {
      parse_safetensors_index(text, "i.json");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(err("{}") == "i.json: has no \"weight_map\" object (tensor name -> shard file)");
  CHECK(err(R"({"weight_map": {}})") == "i.json: weight_map is empty");
  CHECK(err(R"({"weight_map": {"a": 3}})") == "i.json: weight_map \"a\" is 3, not a file name");
  CHECK(err(R"({"metadata": {"total_size": -1}, "weight_map": {"a": "x"}})") ==
        "i.json: metadata.total_size -1 is not a whole number");
  CHECK(
      parse_safetensors_index(R"({"metadata": {"total_size": "14483464192"}, "weight_map": {"a": "x"}})", "i")
          .total_size == 14483464192ull);
}
