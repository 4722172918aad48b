// The embedded presets as cmake/embed.cmake converts them at build time (StaticJson): the same
// document as the JSON text, node for node, and the same presets as parsing that text.
#include <catch2/catch.hpp>

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include <memplan/presets.hpp>
#include "core/base/static_json.hpp"

namespace memplan::embedded {
std::string_view gpus();
std::string_view models();
const StaticJson& gpus_tree();
const StaticJson& models_tree();
}  // namespace memplan::embedded

using namespace memplan;
using nlohmann::json;

namespace {

// Every difference between the two documents, as "path: what" lines (empty when they agree).
std::string differences(const json& j, const StaticJson& s, const std::string& path) {
  using T = StaticJson::Type;
  auto differ = [&](const std::string& what) { return path + ": " + what + "\n"; };
  switch (j.type()) {
    case json::value_t::null:
      return s.type == T::null ? "" : differ("not null");
    case json::value_t::boolean:
      return s.type == T::boolean && s.boolean_value == j.get<bool>() ? "" : differ("boolean differs");
    case json::value_t::number_unsigned:
      return s.type == T::number_unsigned && s.unsigned_value == j.get<uint64_t>()
                 ? ""
                 : differ("unsigned differs");
    case json::value_t::number_integer:
      return s.type == T::number_integer && s.integer_value == j.get<int64_t>() ? ""
                                                                                : differ("integer differs");
    case json::value_t::number_float:
      return s.type == T::number_float && s.float_value == j.get<double>() ? "" : differ("float differs");
    case json::value_t::string:
      return s.type == T::string && s.text == j.get<std::string>() ? "" : differ("string differs");
    case json::value_t::array: {
      if (s.type != T::array || s.size() != j.size()) return differ("array differs");
      std::string out;
      for (std::size_t i = 0; i < j.size(); ++i)
        out += differences(j[i], s[i], path + "[" + std::to_string(i) + "]");
      return out;
    }
    case json::value_t::object: {
      if (s.type != T::object || s.size() != j.size()) return differ("object differs");
      std::string out;
      for (const auto& [key, value] : j.items()) {
        const StaticJson* m = s.find(key);
        out += m ? differences(value, *m, path + "." + key) : differ("no member " + key);
      }
      return out;
    }
    default:
      return differ("unexpected type");
  }
}

}  // namespace

TEST_CASE("the embedded presets converted at build time are the JSON documents, node for node", "[presets]") {
  CHECK(differences(json::parse(embedded::gpus()), embedded::gpus_tree(), "gpus.json") == "");
  CHECK(differences(json::parse(embedded::models()), embedded::models_tree(), "model_presets.json") == "");
  // The comparison sees a difference.
  CHECK(differences(json::parse(embedded::models()), embedded::gpus_tree(), "x") != "");
  CHECK(differences(json::parse(R"({"gpus": 1.5})"), embedded::gpus_tree(), "x") != "");
  // Known values read through the tree.
  const StaticJson* list = embedded::gpus_tree().find("gpus");
  REQUIRE(list);
  REQUIRE(list->size() > 0);
  const StaticJson& t4 = (*list)[0];
  REQUIRE(t4.find("id"));
  CHECK(t4.find("id")->text == "t4");
  CHECK(t4.find("memory_total_bytes")->unsigned_value == 15360ull << 20);  // 15,360 MiB
  CHECK(t4.find("bf16")->is_boolean());
  CHECK(!t4.find("bf16")->boolean_value);
  CHECK(t4.find("no such field") == nullptr);
}

TEST_CASE("builtin presets read from the converted documents equal parsing the JSON text", "[presets]") {
  const Presets& built = builtin_presets();
  const Presets parsed = parse_presets(embedded::gpus(), embedded::models(), "embedded presets");
  CHECK(built.default_gpus == parsed.default_gpus);
  REQUIRE(built.gpus.size() == parsed.gpus.size());
  for (std::size_t i = 0; i < parsed.gpus.size(); ++i) {
    const GpuSpec &a = built.gpus[i], &b = parsed.gpus[i];
    INFO(b.id);
    CHECK(a.id == b.id);
    CHECK(a.name == b.name);
    CHECK(a.aliases == b.aliases);
    CHECK(a.vendor == b.vendor);
    CHECK(a.memory_total_bytes == b.memory_total_bytes);
    CHECK(a.reserved_known == b.reserved_known);
    CHECK(a.memory_reserved_bytes == b.memory_reserved_bytes);
    CHECK(a.budget_bytes == b.budget_bytes);
    CHECK(a.budget_note == b.budget_note);
    CHECK(a.compute_capability == b.compute_capability);
    CHECK(a.bf16 == b.bf16);
    CHECK(a.fp8 == b.fp8);
    CHECK(a.source == b.source);
    CHECK(a.notes == b.notes);
  }
  REQUIRE(built.models.size() == parsed.models.size());
  for (std::size_t i = 0; i < parsed.models.size(); ++i) {
    const ModelPreset &a = built.models[i], &b = parsed.models[i];
    INFO(b.model.id);
    CHECK(a.model.id == b.model.id);
    CHECK(a.model.name == b.model.name);
    CHECK(a.aliases == b.aliases);
    CHECK(a.model.parameters == b.model.parameters);
    CHECK(a.model.active_parameters == b.model.active_parameters);
    CHECK(a.model.tensors == b.model.tensors);
    CHECK(a.model.source == b.model.source);
    REQUIRE(a.model.arch.has_value() == b.model.arch.has_value());
    if (!b.model.arch) continue;
    const TransformerArch &x = *a.model.arch, &y = *b.model.arch;
    CHECK(x.model_type == y.model_type);
    CHECK(x.causal == y.causal);
    CHECK(x.layers == y.layers);
    CHECK(x.hidden == y.hidden);
    CHECK(x.heads == y.heads);
    CHECK(x.kv_heads == y.kv_heads);
    CHECK(x.head_dim == y.head_dim);
    CHECK(x.intermediate == y.intermediate);
    CHECK(x.vocab == y.vocab);
    CHECK(x.max_positions == y.max_positions);
    CHECK(x.gated_mlp == y.gated_mlp);
    CHECK(x.activation == y.activation);
    CHECK(x.norm == y.norm);
    CHECK(x.tied_embeddings == y.tied_embeddings);
    CHECK(x.hidden_dropout == y.hidden_dropout);
    CHECK(x.attention_dropout == y.attention_dropout);
    CHECK(x.experts == y.experts);
    CHECK(x.experts_per_token == y.experts_per_token);
  }
}
