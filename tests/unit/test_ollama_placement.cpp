// Ollama's own layer placement by version (ollama_placement.hpp): the three rules on a small
// synthetic model whose sizes are round, so each expected count follows by hand from the Go code
// cited in ollama_placement.hpp; GraphSize against the numbers an Ollama log printed.
#include <catch2/catch.hpp>

#include <memplan/error.hpp>
#include "core/serving/llamacpp_log.hpp"
#include "core/serving/ollama_placement.hpp"

using namespace memplan;

namespace {

constexpr uint64_t k_mib_ollama = 1024ull * 1024;

// 4 layers of 100 MiB, an output matrix of 50 MiB, token_embd 50 MiB; llama, 8 heads of 128.
GgufFile ollama_test_file() {
  GgufFile g;
  g.metadata["general.architecture"] = "llama";
  for (int i = 0; i < 4; ++i)
    g.tensors.push_back({"blk." + std::to_string(i) + ".ffn_up.weight", {}, 0, 0, 0, 100 * k_mib_ollama});
  g.tensors.push_back({"output.weight", {}, 0, 0, 0, 50 * k_mib_ollama});
  g.tensors.push_back({"token_embd.weight", {}, 0, 0, 0, 50 * k_mib_ollama});
  return g;
}

TransformerArch ollama_test_arch() {
  TransformerArch a;
  a.model_type = "llama";
  a.layers = 4;
  a.hidden = 1024;
  a.heads = 8;
  a.kv_heads = 8;
  a.head_dim = 128;
  a.vocab = 1000;
  a.intermediate = 4096;
  return a;
}

OllamaPlacementRequest ollama_test_request(const GgufFile& g, OllamaRule rule) {
  OllamaPlacementRequest r;
  r.graph.weights = &g;
  r.graph.arch = ollama_test_arch();
  r.graph.num_ctx = 1024;  // KV per layer: 1024 x (128 + 128) x 8 x 2 bytes = 4 MiB
  r.rule = rule;
  return r;
}

}  // namespace

TEST_CASE("Ollama versions map to their placement rule", "[ollama]") {
  CHECK(ollama_rule(parse_ollama_version("0.5.4")) == OllamaRule::memory_go_forward);
  CHECK(ollama_rule(parse_ollama_version("0.6.8")) == OllamaRule::memory_go_forward);
  CHECK(ollama_rule(parse_ollama_version("v0.7.0")) == OllamaRule::memory_go_backward);
  CHECK(ollama_rule(parse_ollama_version("0.12.10")) == OllamaRule::memory_go_backward);
  CHECK(ollama_rule(parse_ollama_version("0.12.11")) == OllamaRule::layout);
  CHECK(ollama_rule(parse_ollama_version("0.13")) == OllamaRule::layout);
  CHECK(ollama_rule(parse_ollama_version("0.12.11-rc0")) == OllamaRule::layout);
  CHECK(ollama_rule(parse_ollama_version("0.25.0-rc0")) == OllamaRule::layout);
  CHECK(ollama_rule(parse_ollama_version("0.30.0")) == OllamaRule::llama_server_fit);
  CHECK(ollama_rule(parse_ollama_version(k_ollama_newest)) == OllamaRule::llama_server_fit);
  CHECK_THROWS_AS(parse_ollama_version("0.1.32"), Error);
  CHECK_THROWS_AS(parse_ollama_version("latest"), Error);
  CHECK_THROWS_AS(parse_ollama_version("0..4"), Error);
  CHECK_THROWS_AS(parse_ollama_version(""), Error);
}

TEST_CASE("Ollama's GraphSize for the llama case", "[ollama]") {
  const GgufFile g = ollama_test_file();
  const OllamaPlacementRequest r = ollama_test_request(g, OllamaRule::layout);
  const OllamaGraph graph = ollama_graph_size(r.graph);
  CHECK(graph.family == "llama");
  CHECK(graph.kv.size() == 4);
  CHECK(graph.kv[0] == 4 * k_mib_ollama);
  CHECK(graph.kv_total == 16 * k_mib_ollama);
  // full: max(4 x 512 x (1 + 4 x 1024 + 1024 x 9), 4 x 512 x (1024 + 1000)) = 2048 x 13313
  CHECK(graph.full_offload == 2048ull * 13313);
  // partial: 4 x 512 x 1024 + 4 x 512 x 2049 + 1024^2 x 9/16 + 4 x 1024 x (512 x 8 + 128 x 8)
  CHECK(graph.partial_offload == 2097152ull + 4196352 + 589824 + 20971520);
  OllamaGraphRequest q8 = r.graph;
  q8.kv_type = "q8_0";
  CHECK(ollama_graph_size(q8).kv[0] == 4 * k_mib_ollama);  // the KV type counts only with flash attention
  q8.flash_attn = true;
  CHECK(ollama_graph_size(q8).kv[0] == 2 * k_mib_ollama);
}

TEST_CASE("Ollama's placement: memory.go and the newer layout disagree near the edge", "[ollama]") {
  const GgufFile g = ollama_test_file();
  const OllamaGraph graph = ollama_graph_size(ollama_test_request(g, OllamaRule::layout).graph);
  const uint64_t G = std::max(graph.full_offload, graph.partial_offload), L = 104 * k_mib_ollama;
  const uint64_t minimum = 457 * k_mib_ollama;
  SECTION("everything fits: all 5 under every rule") {
    for (OllamaRule rule :
         {OllamaRule::memory_go_forward, OllamaRule::memory_go_backward, OllamaRule::layout}) {
      OllamaPlacementRequest r = ollama_test_request(g, rule);
      r.free_bytes = {8192 * k_mib_ollama};
      const OllamaPlacement p = place_ollama(r);
      CHECK(p.layers == 5);
      CHECK(p.model_layers == 5);
      CHECK(p.layer_buffer == L);
      CHECK(p.output_bytes == 50 * k_mib_ollama);
    }
  }
  SECTION("3.5 layers of room above the minimum and the graph: two under every rule") {
    // memory.go: the minimum and one layer's buffer are charged first; a layer goes on while
    // free > minimum + buffer + placed + graph + layer: 2 layers (3 x 104 < 3.5 x 104); the GPU
    // then leaves the list and the output layer has nowhere to go.
    // layout: free less the buffer, the minimum and the graph leaves 2.5 layers (260 MiB): the
    // output layer and two layers (258 MiB) are not all five, so it drops the output layer and
    // places two.
    const uint64_t free = minimum + G + L * 7 / 2;
    for (OllamaRule rule :
         {OllamaRule::memory_go_forward, OllamaRule::memory_go_backward, OllamaRule::layout}) {
      OllamaPlacementRequest r = ollama_test_request(g, rule);
      r.free_bytes = {free};
      const OllamaPlacement p = place_ollama(r);
      CHECK(p.layers == 2);
      CHECK(p.graph_used == graph.partial_offload);
      // OLLAMA_GPU_OVERHEAD of one layer takes one layer off.
      r.gpu_overhead = L;
      CHECK(place_ollama(r).layers == 1);
    }
  }
  SECTION("exactly room for everything: memory.go wants more than that, the layout does not") {
    // memory.go tests free > need, greedyFit tests need <= free.
    const uint64_t free = minimum + G + 5 * L + 50 * k_mib_ollama;
    OllamaPlacementRequest r = ollama_test_request(g, OllamaRule::memory_go_backward);
    r.free_bytes = {free};
    CHECK(place_ollama(r).layers == 4);
    r.rule = OllamaRule::layout;
    CHECK(place_ollama(r).layers == 5);
  }
  SECTION("too little for the minimum, the graph and two layers: none") {
    OllamaPlacementRequest r = ollama_test_request(g, OllamaRule::memory_go_backward);
    r.free_bytes = {minimum + G + 2 * L - 1};
    CHECK(place_ollama(r).layers == 0);
  }
  SECTION("num_gpu set: exactly that many") {
    for (OllamaRule rule : {OllamaRule::memory_go_forward, OllamaRule::layout}) {
      OllamaPlacementRequest r = ollama_test_request(g, rule);
      r.free_bytes = {8192 * k_mib_ollama};
      r.num_gpu = 2;
      CHECK(place_ollama(r).layers == 2);
    }
  }
  SECTION("two GPUs: memory.go spreads the layers, the layout packs them onto one") {
    OllamaPlacementRequest r = ollama_test_request(g, OllamaRule::memory_go_backward);
    r.free_bytes = {8192 * k_mib_ollama, 8192 * k_mib_ollama};
    const OllamaPlacement spread = place_ollama(r);
    CHECK(spread.layers == 5);
    REQUIRE(spread.split.size() == 2);
    // layers 3 and 1 go to gpusWithSpace[i % 2] = GPU 1, layers 2 and 0 and the output to GPU 0
    CHECK(spread.split[0] == 3);
    CHECK(spread.split[1] == 2);
    r.rule = OllamaRule::layout;
    const OllamaPlacement packed = place_ollama(r);
    CHECK(packed.layers == 5);
    CHECK(packed.split[0] + packed.split[1] == 5);
    CHECK((packed.split[0] == 0 || packed.split[1] == 0));
  }
}

TEST_CASE("Ollama's offload line is read from a log", "[ollama]") {
  const LlamaCppLog log = parse_llamacpp_log(
      "time=2025-05-23T17:16:43.377Z level=INFO source=server.go:168 msg=offload library=cuda "
      "layers.requested=49 layers.model=49 layers.offload=37 layers.split=37,0 memory.available=\"[11.5 GiB "
      "4.6 GiB]\" memory.gpu_overhead=\"0 B\" memory.required.kv=\"2.0 GiB\" memory.graph.full=\"1.3 GiB\" "
      "memory.graph.partial=\"1.3 GiB\"\n");
  REQUIRE(log.ollama);
  CHECK(log.ollama->requested == 49);
  CHECK(log.ollama->model_layers == 49);
  CHECK(log.ollama->offload == 37);
  CHECK(log.ollama->split == std::vector<uint64_t>{37, 0});
  REQUIRE(log.ollama->available.size() == 2);
  CHECK(log.ollama->available[1] == Approx(4.6 * 1024 * 1024 * 1024));
  CHECK(*log.ollama->gpu_overhead == 0);
  CHECK(*log.ollama->graph_partial == Approx(1.3 * 1024 * 1024 * 1024));
  CHECK(parse_human_bytes("313.0 MiB").value() == Approx(313.0 * 1024 * 1024));
  CHECK_FALSE(parse_human_bytes("313.0 MB"));
  CHECK_FALSE(parse_human_bytes("GiB"));
}
