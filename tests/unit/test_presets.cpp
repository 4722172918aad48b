#include <catch2/catch.hpp>

#include <memplan/error.hpp>
#include <memplan/presets.hpp>

#include "error_of.hpp"

using namespace memplan;
using memplan::test::error_of;

TEST_CASE("built-in presets cover what the foundation issue names", "[presets]") {
  const Presets& p = builtin_presets();
  for (const char* g : {"t4", "v100-16gb", "v100-32gb", "a10g", "l4", "rtx-3090", "rtx-4090", "a100-40gb",
                        "a100-80gb", "h100-80gb", "h200", "colab-t4", "24gb", "apple-m4-max-128gb"})
    CHECK_NOTHROW(find_gpu(p, "--gpu", g));
  for (const char* m : {"gpt2", "gpt2-medium", "gpt2-xl", "bert-base-uncased", "bert-large-uncased",
                        "llama-2-7b", "llama-2-13b", "llama-2-70b", "llama-3-8b", "llama-3-70b", "mistral-7b",
                        "mixtral-8x7b", "qwen2-7b", "phi-3-mini", "gemma-2b", "gemma-7b", "tinyllama-1.1b"})
    CHECK_NOTHROW(find_model(p, "--model", m));
  for (const ModelPreset& m : p.models) CHECK(!m.model.source.empty());
  for (const GpuSpec& g : p.gpus) CHECK(!g.source.empty());
  CHECK(p.default_gpus == std::vector<std::string>{"t4", "rtx-4090", "a100-80gb", "h100-80gb"});
}

TEST_CASE("preset parameter counts equal the published counts", "[presets]") {
  const Presets& p = builtin_presets();
  // Published integers (keras-hub preset metadata, HF index totals; each preset's "source" names it).
  const std::pair<const char*, uint64_t> published[] = {
      {"gpt2", 124439808ull},           {"gpt2-medium", 354823168ull},
      {"gpt2-xl", 1557611200ull},       {"bert-base-uncased", 109482240ull},
      {"llama-2-7b", 6738415616ull},    {"llama-2-13b", 13015864320ull},
      {"llama-2-70b", 68976648192ull},  {"llama-3-8b", 8030261248ull},
      {"mistral-7b", 7241732096ull},    {"mixtral-8x7b", 46702792704ull},
      {"qwen2-7b", 7615616512ull},      {"phi-3-mini", 3821079552ull},
      {"gemma-2b", 2506172416ull},      {"gemma-7b", 8537680896ull},
      {"tinyllama-1.1b", 1100048384ull}};
  for (const auto& [id, count] : published) {
    INFO(id);
    CHECK(find_model(p, "--model", id).model.parameters == count);
  }
  // Index total_size of Llama-3-8B is exactly 2 bytes per parameter: 16,060,522,496.
  CHECK(find_model(p, "--model", "llama-3-8b").model.parameters * 2 == 16060522496ull);
}

TEST_CASE("unknown names get did-you-mean", "[presets]") {
  const Presets& p = builtin_presets();
  CHECK(error_of([&] { find_gpu(p, "--gpu", "rtx-4909"); }) ==
        "--gpu: \"rtx-4909\" is not a known GPU (see `memplan gpus`; did you mean \"rtx-4090\"?)");
  CHECK(error_of([&] { find_model(p, "--model", "lama-2-7b"); }) ==
        "--model: \"lama-2-7b\" is not a known model (see `memplan models`; did you mean \"llama-2-7b\"?)");
}

TEST_CASE("preset files are validated at load", "[presets]") {
  CHECK(error_of([] {
          parse_presets("{", "", "x.json");
        }).find("x.json: the presets file is not valid JSON (") == 0);
  CHECK(error_of([] { parse_presets("{}", "", "x.json"); }) == "x.json: needs a \"gpus\" array");
  CHECK(error_of([] { parse_presets(R"({"gpus":[{"id":"a","name":"A","source":"s"}]})", "", "x.json"); }) ==
        "x.json: gpus[0] (a): field \"memory_total_bytes\" is missing");
  CHECK(error_of([] {
          parse_presets(R"({"gpus":[{"id":"a","name":"A","source":"s","memory_total_bytes":-5}]})", "",
                        "x.json");
        }) == "x.json: gpus[0] (a): field \"memory_total_bytes\" must be a non-negative integer");
  CHECK(error_of([] {
          parse_presets(R"({"gpus":[{"id":"a","name":"A","source":"s","memory_total_bytes":5},
                                    {"id":"b","aliases":["A"],"name":"B","source":"s","memory_total_bytes":5}]})",
                        "", "x.json");
        }) == "x.json: the name \"A\" is used twice");
  Presets ok = parse_presets(
      R"({"gpus":[{"id":"mine","name":"Mine","source":"me","memory_total_bytes":1000}]})", "", "x");
  CHECK(ok.gpus.size() == 1);
  CHECK(ok.gpus[0].usable_bytes() == 1000);
}
