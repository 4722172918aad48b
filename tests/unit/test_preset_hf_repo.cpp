// The presets' Hugging Face repository ids (what `vllm serve` loads) and the driver-reserved share
// of the L4 and RTX 4090, checked against public figures.
#include <catch2/catch.hpp>

#include <memplan/error.hpp>
#include <memplan/presets.hpp>

#include "error_of.hpp"

using namespace memplan;
using memplan::test::error_of;

TEST_CASE("presets name their Hugging Face repository", "[presets][hf-repo]") {
  const Presets& p = builtin_presets();
  // The model pages each preset's source cites.
  const std::pair<const char*, const char*> pages[] = {{"llama-3-8b", "meta-llama/Meta-Llama-3-8B"},
                                                       {"llama-2-7b", "meta-llama/Llama-2-7b-hf"},
                                                       {"mistral-7b", "mistralai/Mistral-7B-v0.1"},
                                                       {"qwen3-8b", "Qwen/Qwen3-8B"},
                                                       {"gpt2", "openai-community/gpt2"}};
  for (const auto& [id, repo] : pages) {
    INFO(id);
    CHECK(find_model(p, "--model", id).model.hf_repo == repo);
  }
  CHECK(find_model(p, "--model", "gpt3-175b").model.hf_repo.empty());  // never published
  for (const ModelPreset& m : p.models) {
    INFO(m.model.id);
    if (m.model.id != "gpt3-175b") CHECK(m.model.hf_repo.find('/') != std::string::npos);
  }
  const auto with = [](const char* repo) {
    return std::string(R"({"models":[{"id":"m","name":"M","parameters":1,"source":"s","hf_repo":)") + repo +
           "}]}";
  };
  CHECK(parse_presets("", with("\"org/name-1.5B\""), "x.json").models[0].model.hf_repo == "org/name-1.5B");
  for (const char* bad : {"\"name\"", "\"a/b/c\"", "\"/b\"", "\"a b/c\"", "5"}) {
    INFO(bad);
    CHECK(error_of([&] { parse_presets("", with(bad), "x.json"); }).find("hf_repo") != std::string::npos);
  }
}

TEST_CASE("the L4 and RTX 4090 presets leave out the driver's share as torch sees it", "[presets][gpu]") {
  const Presets& p = builtin_presets();
  // torch.cuda.get_device_properties on an L4 prints 22.03 GiB (public outputs; NVML says 23034 MiB).
  const double l4 = static_cast<double>(find_gpu(p, "--gpu", "l4").usable_bytes()) / double(1ull << 30);
  CHECK(l4 == Approx(22.03).margin(0.005));
  // ... and total_memory=24563MB on an RTX 4090 (NVML: 24564 MiB), both rounded down to MiB: no
  // share the public outputs resolve.
  const uint64_t rtx4090 = find_gpu(p, "--gpu", "rtx-4090").usable_bytes();
  CHECK(rtx4090 >= 24563ull << 20);
  CHECK(rtx4090 < 24565ull << 20);
}
