// --images on a vision-language config: the image tokens join the sequence, so the KV cache holds
// them; a text-only model refuses the flag.
#include <catch2/catch.hpp>

#include <cctype>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_harness.hpp"

using memplan::test::run_cli;

namespace {

const std::string k_llava = std::string(MEMPLAN_TEST_DATA_DIR) + "/hf_configs/llava-1.5-7b-hf.json";

}  // namespace

TEST_CASE("estimate --images 2 on LLaVA-1.5-7B: 2 x 576 image tokens in the KV cache", "[cli][vision]") {
  // The language model is Llama-2-7B: 32 layers x 32 kv heads x 128 head_dim x 2 (K and V) x 2 B
  // (fp16) = 524,288 bytes per token. 100 text tokens + 2 x 576 image tokens = 1,252 tokens.
  const auto r = run_cli({"estimate", "--config", k_llava, "--mode", "infer", "--precision", "fp16", "--seq",
                          "100", "--images", "2", "--format", "json"});
  REQUIRE(r.err.empty());
  const nlohmann::json j = nlohmann::json::parse(r.out);
  CHECK(j["breakdown"]["kv_cache"] == 524288ull * 1252);
  CHECK(j["inputs"]["seq"] == 100);  // as given: the plan reads back to the same estimate
  CHECK(j["inputs"]["images"] == 2);
}

TEST_CASE("a text-only model refuses --images, naming the flag", "[cli][vision]") {
  const auto r =
      run_cli({"estimate", "--model", "llama-2-7b", "--mode", "infer", "--seq", "100", "--images", "1"});
  CHECK(r.code == 2);
  CHECK(r.err.find("memplan: error: --images: applies to vision-language models") == 0);
}

TEST_CASE("estimate --images on Qwen2-VL-7B: tokens follow --image-size (one per 28 x 28 pixels)",
          "[cli][vision]") {
  // Qwen2-7B's cache: 28 layers x 4 kv heads x 128 head_dim x 2 (K and V) x 2 B = 57,344 B a token.
  // A 448 x 448 image: (448 / 28)^2 = 256 tokens; 100 text + 2 x 256 = 612 tokens.
  const std::string q = std::string(MEMPLAN_TEST_DATA_DIR) + "/hf_configs/Qwen2-VL-7B-Instruct.json";
  const auto r = run_cli({"estimate", "--config", q, "--mode", "infer", "--precision", "bf16", "--seq", "100",
                          "--images", "2", "--image-size", "448", "--format", "json"});
  REQUIRE(r.err.empty());
  const nlohmann::json j = nlohmann::json::parse(r.out);
  CHECK(j["breakdown"]["kv_cache"] == 57344ull * 612);
  // 1,000 px rounds to 1,008 (36 x 28): 1,296 tokens. 14 px rounds up to the 56 px minimum: 4.
  const auto big = run_cli({"estimate", "--config", q, "--mode", "infer", "--precision", "bf16", "--seq",
                            "100", "--images", "1", "--image-size", "1000", "--format", "json"});
  CHECK(nlohmann::json::parse(big.out)["breakdown"]["kv_cache"] == 57344ull * (100 + 1296));
  const auto tiny = run_cli({"estimate", "--config", q, "--mode", "infer", "--precision", "bf16", "--seq",
                             "100", "--images", "1", "--image-size", "14", "--format", "json"});
  CHECK(nlohmann::json::parse(tiny.out)["breakdown"]["kv_cache"] == 57344ull * (100 + 4));
  // Without --image-size the tokens are unknown: refused, naming the flag.
  const auto none = run_cli({"estimate", "--config", q, "--mode", "infer", "--seq", "100", "--images", "1"});
  CHECK(none.code == 2);
  CHECK(none.err.find("memplan: error: --image-size: must be given for") == 0);
}

TEST_CASE("inspect shows each part of a vision-language model with its config fields", "[cli][vision]") {
  const std::string dir = std::string(MEMPLAN_TEST_DATA_DIR) + "/hf_configs/";
  const auto scout = run_cli({"inspect", dir + "Llama-4-Scout-17B-16E.json"});
  REQUIRE(scout.code == 0);
  CHECK(scout.out.find("108,641,793,536") != std::string::npos);
  CHECK(scout.out.find("vision layer x 34: 23,807,872 parameters each") != std::string::npos);
  CHECK(scout.out.find("chunked attention x 36") != std::string::npos);
  const auto qwen = run_cli({"inspect", dir + "Qwen2-VL-7B-Instruct.json"});
  CHECK(qwen.out.find("vision merger x 1") != std::string::npos);
  CHECK(qwen.out.find("training with images: frozen (all images of a sample one patch sequence") !=
        std::string::npos);
  CHECK(qwen.out.find("from vision_config: spatial_merge_size, hidden_size") != std::string::npos);
  const auto mllama = run_cli({"inspect", dir + "Llama-3.2-11B-Vision-Instruct.json"});
  CHECK(mllama.out.find("cross-attention extras x 8: 258 parameters each") != std::string::npos);
  CHECK(mllama.out.find("cross attention x 8") != std::string::npos);
  CHECK(mllama.out.find("full attention x 32") != std::string::npos);
}

TEST_CASE("estimate --images on Llama 3.2 Vision: the cross-attention layers cache the image tiles",
          "[cli][vision][mllama]") {
  // By hand from transformers' mllama: 40 layers, 8 of them cross-attention (cross_attention_layers);
  // 8 kv heads x 128 x 2 (K and V) x 2 B = 4,096 B per token and layer. The 32 self-attention layers
  // cache the 100 text tokens + 1 <|image|> token; the 8 cross-attention layers cache the image:
  // MllamaImageProcessor pads it to max_num_tiles 4 tiles of (560 / 14)^2 = 1,600 patches + 1 class
  // token = 6,404 tokens, whatever its size. (32 x 101 + 8 x 6,404) x 4,096 B = 223,084,544 B.
  const std::string dir = std::string(MEMPLAN_TEST_DATA_DIR) + "/hf_configs/";
  const auto r =
      run_cli({"estimate", "--config", dir + "Llama-3.2-11B-Vision-Instruct.json", "--mode", "infer",
               "--precision", "bf16", "--seq", "100", "--images", "1", "--format", "json"});
  REQUIRE(r.err.empty());
  CHECK(nlohmann::json::parse(r.out)["breakdown"]["kv_cache"] == 223084544ull);
  const auto explain =
      run_cli({"estimate", "--config", dir + "Llama-3.2-11B-Vision-Instruct.json", "--mode", "infer",
               "--precision", "bf16", "--seq", "100", "--images", "1", "--image-size", "448", "--explain"});
  REQUIRE(explain.code == 0);
  CHECK(explain.out.find("32 self-attention layers x 101 text tokens + 8 cross-attention layers x 6404 image "
                         "tokens") != std::string::npos);
  CHECK(explain.out.find("the image fills 1 of its 4 tiles") != std::string::npos);
  // Two images: twice the image tokens (the cache does not depend on the text beyond its own layers).
  const auto two =
      run_cli({"estimate", "--config", dir + "Llama-3.2-11B-Vision-Instruct.json", "--mode", "infer",
               "--precision", "bf16", "--seq", "100", "--images", "2", "--format", "json"});
  CHECK(nlohmann::json::parse(two.out)["breakdown"]["kv_cache"] == (32ull * 102 + 8ull * 12808) * 4096);
}

TEST_CASE("estimate --images on Llama 4 Scout: 144 tokens a tile, tiles from --image-size", "[cli][vision]") {
  // Scout's cache: 12 global layers hold every token, 36 chunked layers at most 8,192; below the
  // chunk all 48 hold all: 48 x 8 kv heads x 128 x 2 (K and V) x 2 B = 196,608 B a token.
  // An image of one tile: <|image_start|>, <|image|>, 144 tokens, <|image_end|> = 147
  // (Llama4Processor._prompt_split_image). 100 text + 2 x 147 image tokens = 394.
  const std::string s = std::string(MEMPLAN_TEST_DATA_DIR) + "/hf_configs/Llama-4-Scout-17B-16E.json";
  const auto r = run_cli({"estimate", "--config", s, "--mode", "infer", "--precision", "bf16", "--seq", "100",
                          "--images", "2", "--format", "json"});
  REQUIRE(r.err.empty());
  CHECK(nlohmann::json::parse(r.out)["breakdown"]["kv_cache"] == 196608ull * 394);
  // 1,024 px: ceil(1,024 / 336) = 4, a 4 x 4 canvas (16 = max_patches): 16 x (144 + 1 separator)
  // + the global tile's 144 + 3 = 2,467 tokens; 100 + 2,467 = 2,567.
  const auto sized = run_cli({"estimate", "--config", s, "--mode", "infer", "--precision", "bf16", "--seq",
                              "100", "--images", "1", "--image-size", "1024", "--format", "json"});
  REQUIRE(sized.err.empty());
  CHECK(nlohmann::json::parse(sized.out)["breakdown"]["kv_cache"] == 196608ull * 2567);
  // 600 px: a 2 x 2 canvas: 4 x 145 + 147 = 727 tokens.
  const auto small = run_cli({"estimate", "--config", s, "--mode", "infer", "--precision", "bf16", "--seq",
                              "100", "--images", "1", "--image-size", "600", "--format", "json"});
  CHECK(nlohmann::json::parse(small.out)["breakdown"]["kv_cache"] == 196608ull * 827);
}

namespace {

uint64_t vision_activations(const std::vector<std::string>& args) {
  const auto r = run_cli(args);
  INFO(r.err);
  REQUIRE(r.code == 0);
  return nlohmann::json::parse(r.out)["breakdown"]["activations"].get<uint64_t>();
}

}  // namespace

TEST_CASE("training LLaVA-1.5-7B with an image: the frozen tower keeps nothing, the projector its inputs",
          "[cli][vision]") {
  // The language model sees 100 text + 576 image tokens either way; what the image adds beside them
  // is LlavaMultiModalProjector's saved inputs: linear_1's (576 x 1024), GELU's input and output
  // (576 x 4096 each), bf16.
  const std::vector<std::string> base = {"estimate", "--config", k_llava, "--precision",
                                         "bf16",     "--format", "json"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = base;
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  const uint64_t text_only = vision_activations(with({"--seq", "676"}));
  const uint64_t frozen = vision_activations(with({"--seq", "100", "--images", "1"}));
  const uint64_t projector = 576ull * 1024 * 2 + 2 * 576ull * 4096 * 2;
  CHECK(frozen - text_only == projector);

  // --train-vision: 23 of the 24 CLIP layers reach the loss (vision_feature_layer -2), each keeping
  // over 577 tokens (576 patches + class): two LayerNorms' input, fp32 mean and rstd, and output;
  // q, k, v, the attention output, sdpa's fp32 log-sum-exp (16 heads x 577); fc1's output,
  // sigmoid(1.702 x) and quick_gelu's product (577 x 4096); plus pre_layrnorm's input and stats.
  const uint64_t sh = 577ull * 1024 * 2, stats = 577ull * 2 * 4;
  const uint64_t layer = 2 * (sh + stats + sh) + 4 * sh + 16ull * 577 * 4 + 3ull * 577 * 4096 * 2;
  const uint64_t trained = vision_activations(with({"--seq", "100", "--images", "1", "--train-vision"}));
  CHECK(trained - text_only == 23 * layer + sh + stats + projector);

  // LoRA (peft on the language model): tower and projector frozen, nothing beside the tokens.
  const uint64_t lora_text = vision_activations(with({"--seq", "676", "--lora", "16"}));
  const uint64_t lora = vision_activations(with({"--seq", "100", "--images", "1", "--lora", "16"}));
  CHECK(lora == lora_text);

  // --explain says what was counted.
  const auto ex = run_cli({"estimate", "--config", k_llava, "--precision", "bf16", "--seq", "100", "--images",
                           "1", "--train-vision", "--explain"});
  REQUIRE(ex.code == 0);
  CHECK(ex.out.find("+ vision tower (trained, --train-vision) and projector = batch 1 x 1 images") !=
        std::string::npos);
  CHECK(ex.out.find("[vision layer, each of 23] quick_gelu sigmoid(1.702 x)") != std::string::npos);
  const auto fz = run_cli(
      {"estimate", "--config", k_llava, "--precision", "bf16", "--seq", "100", "--images", "1", "--explain"});
  CHECK(fz.out.find("the frozen vision tower keeps nothing") != std::string::npos);
  // inspect names the tower's layer and what training runs through it
  const auto in = run_cli({"inspect", k_llava});
  CHECK(in.out.find("vision layer x 24: 12,596,224 parameters each") != std::string::npos);
  CHECK(in.out.find("577 tokens x 1024 through 23 layer(s)") != std::string::npos);
}

TEST_CASE("training with images where the ledger does not model it is refused, naming the flag",
          "[cli][vision]") {
  const std::string q = std::string(MEMPLAN_TEST_DATA_DIR) + "/hf_configs/Qwen2-VL-7B-Instruct.json";
  const std::string ml =
      std::string(MEMPLAN_TEST_DATA_DIR) + "/hf_configs/Llama-3.2-11B-Vision-Instruct.json";
  // mllama's cross-attention layers are counted with sdpa, for a full fine-tune or peft's default LoRA;
  // LoRA dropout, autocast and eager attention are refused, naming their flags.
  const auto lora = run_cli({"estimate", "--config", ml, "--precision", "bf16", "--seq", "100", "--images",
                             "1", "--lora", "16", "--lora-dropout", "0.05"});
  CHECK(lora.code == 2);
  CHECK(lora.err.find(
            "memplan: error: --lora-dropout: mllama's cross-attention layers are counted under LoRA") == 0);
  const auto amp =
      run_cli({"estimate", "--config", ml, "--precision", "amp-bf16", "--seq", "100", "--images", "1"});
  CHECK(amp.code == 2);
  CHECK(amp.err.find("memplan: error: --precision: mllama's cross-attention layers") == 0);
  const auto eager = run_cli({"estimate", "--config", ml, "--precision", "bf16", "--seq", "100", "--images",
                              "1", "--attention", "eager"});
  CHECK(eager.code == 2);
  CHECK(eager.err.find("memplan: error: --attention: mllama's cross-attention layers") == 0);
  // Qwen2-VL's frozen tower is counted; its trained one is not yet: refused, naming the flag.
  const auto qt = run_cli({"estimate", "--config", q, "--precision", "bf16", "--seq", "100", "--images", "1",
                           "--image-size", "448", "--train-vision"});
  CHECK(qt.code == 2);
  CHECK(qt.err.find("memplan: error: --train-vision: the qwen2_vl vision tower's saved tensors") == 0);
  const auto alone = run_cli({"estimate", "--config", k_llava, "--seq", "100", "--train-vision"});
  CHECK(alone.code == 2);
  CHECK(alone.err ==
        "memplan: error: --train-vision: needs --images N (the images whose vision tower trains)\n");
  // inference needs no tower ledger
  CHECK(run_cli({"estimate", "--config", q, "--mode", "infer", "--seq", "100", "--images", "1",
                 "--image-size", "448"})
            .code == 0);
}

TEST_CASE("training Llama 3.2 Vision with an image: the cross-attention layers over 4 x 1,601 features",
          "[cli][vision]") {
  // Llama-3.2-11B-Vision: 40 text layers, 8 of them cross-attention (cross_attention_layers), which
  // transformers runs only for a sample with images. bf16, sdpa, a full fine-tune: 100 text tokens +
  // one <|image|> token = s 101; the image is 4 tiles (max_num_tiles) x 1,601 positions = N 6,404
  // features, the projector's output (N x 4096) read by every layer's k_proj and v_proj.
  const std::string ml =
      std::string(MEMPLAN_TEST_DATA_DIR) + "/hf_configs/Llama-3.2-11B-Vision-Instruct.json";
  const std::vector<std::string> base = {"estimate", "--config", ml,    "--precision",
                                         "bf16",     "--format", "json"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = base;
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  const uint64_t s = 101, N = 6404, h = 4096, qd = 4096, kvd = 1024, heads = 32, kv = 8, ff = 14336;
  // An RMSNorm keeps its input upcast to fp32, rsqrt per token (per head and token for q_norm and
  // k_norm) and the normalised input cast back for the weight.
  auto norm = [](uint64_t tokens, uint64_t width, uint64_t groups) {
    return tokens * width * 4 + tokens * groups * 4 + tokens * width * 2;
  };
  const uint64_t layer = norm(s, h, 1) + s * h * 2          // input_layernorm, q_proj's input
                         + norm(s, qd, heads) + s * qd * 2  // q_norm, q
                         + norm(N, kvd, kv)                 // k_norm
                         + 2 * N * qd * 2                   // k and v repeated to 32 heads (repeat_kv)
                         + s * 6416 * 2                     // the mask padded to 6,416 keys
                         + s * qd * 2 + heads * 128 * 4     // output, log-sum-exp (rows rounded to 128)
                         + s * h * 2                        // o_proj's output (the tanh gate's multiply)
                         + norm(s, h, 1) + s * h * 2        // post_attention_layernorm, MLP input
                         + 4 * s * ff * 2                   // gate, silu, up, their product
                         + s * h * 2;                       // masked MLP output (the tanh gate's multiply)
  const uint64_t shared = N * h * 2 + s * 2;                // image features; full_text_row mask
  const uint64_t projector = 4 * 1601ull * 7680 * 2;        // multi_modal_projector's input
  const uint64_t text = vision_activations(with({"--seq", "101"}));
  const uint64_t image = vision_activations(with({"--seq", "100", "--images", "1"}));
  CHECK(image - text == 8 * layer + shared + projector);
  CHECK(image - text == 1'509'185'290ull);

  // Full checkpointing: each cross-attention layer keeps its input; the mask is a checkpoint input;
  // one rebuilt in backward holds `layer`, more than a self-attention layer does: the difference counts.
  const auto self = run_cli({"estimate", "--config", ml, "--precision", "bf16", "--seq", "101", "--explain"});
  REQUIRE(self.code == 0);
  const auto at = self.out.find("others ");
  REQUIRE(at != std::string::npos);
  const uint64_t self_layer = std::stoull([&] {
    std::string digits;
    for (size_t i = at + 7;
         i < self.out.size() && (std::isdigit(static_cast<unsigned char>(self.out[i])) || self.out[i] == ',');
         ++i)
      if (self.out[i] != ',') digits += self.out[i];
    return digits;
  }());
  REQUIRE(self_layer < layer);
  const uint64_t text_gc = vision_activations(with({"--seq", "101", "--checkpointing", "full"}));
  const uint64_t image_gc =
      vision_activations(with({"--seq", "100", "--images", "1", "--checkpointing", "full"}));
  CHECK(image_gc - text_gc == 8 * s * h * 2 + shared + s * N * 2 + (layer - self_layer) + projector);

  // LoRA r=16 on q and v (peft's default for Llama; adapters in fp32): no base Linear keeps its input,
  // no RMSNorm its normalised input, no gate its operand; the q and v adapters keep their input cast
  // to fp32 and x.A; v's reads the image features (N x 4096 fp32 in every layer); k needs no
  // gradient, so k_norm keeps nothing; the projector is frozen.
  const uint64_t lora_layer = s * h * 4 + s * 4                          // input_layernorm: upcast, rsqrt
                              + s * h * 4 + s * 16 * 4                   // q adapter
                              + s * qd * 4 + s * heads * 4 + s * qd * 2  // q_norm, q
                              + N * h * 4 + N * 16 * 4                   // v adapter over the image features
                              + 2 * N * qd * 2 + s * 6416 * 2            // repeated k and v, padded mask
                              + s * qd * 2 + heads * 128 * 4             // output, log-sum-exp
                              + s * h * 4 + s * 4                        // post_attention_layernorm
                              + 3 * s * ff * 2;                          // gate's output, silu's, up's
  const uint64_t text_lora = vision_activations(with({"--seq", "101", "--lora", "16"}));
  const uint64_t image_lora = vision_activations(with({"--seq", "100", "--images", "1", "--lora", "16"}));
  CHECK(image_lora - text_lora == 8 * lora_layer + s * 2);
  CHECK(lora_layer == 228'550'280ull);

  // Without images the cross-attention layers do not run: 32 layers in the ledger.
  const auto ex = run_cli(
      {"estimate", "--config", ml, "--precision", "bf16", "--seq", "100", "--images", "1", "--explain"});
  REQUIRE(ex.code == 0);
  CHECK(ex.out.find("activations per sample = 32 layers") != std::string::npos);
  CHECK(ex.out.find("+ cross-attention layers = batch 1 x (8 layers x " + [&] {
    std::string t = std::to_string(layer), o;
    for (size_t i = 0; i < t.size(); ++i) {
      if (i && (t.size() - i) % 3 == 0) o += ',';
      o += t[i];
    }
    return o;
  }()) != std::string::npos);
  // The frozen tower's working set, named: an image is one sequence of 4 x 1,608 (1,601 padded to 8)
  // = 6,432 tokens; 32 local layers' inputs and output kept (output_hidden_states), 5 intermediate
  // outputs copied, the final output and their concatenation: 32 + 2 x 5 + 3 = 45 rows of 6,432 x 1280,
  // and the 6,432 x 6,432 mask.
  CHECK(ex.out.find("its largest layer's " + std::string("823,707,648") + " B per image of working memory") !=
        std::string::npos);
}

TEST_CASE("serve (vLLM) on Llama 3.2 Vision: each request's image takes cross-attention blocks from the pool",
          "[cli][vision][mllama][serve]") {
  // vLLM 0.6.4's input_processor_for_mllama: encoder tokens = tiles x ((560 // 14)^2 + 1) = tiles x 1,601,
  // tiles from get_optimal_tiled_canvas (no padding: a 448 px square is 1 tile, 1,120 px or no size
  // the worst case of max_num_tiles 4); block_manager.py can_allocate takes ceil(tokens / 16) of the
  // pool's blocks for them beside ceil(max_model_len / 16) for the text.
  const std::string cfg =
      std::string(MEMPLAN_TEST_DATA_DIR) + "/hf_configs/Llama-3.2-11B-Vision-Instruct.json";
  auto serve = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = {"serve",           "--config", cfg,        "--gpu", "a100-80gb",
                                  "--max-model-len", "4096",     "--format", "json"};
    a.insert(a.end(), extra.begin(), extra.end());
    const auto r = run_cli(a);
    INFO(r.err);
    REQUIRE(r.code == 0);
    return nlohmann::json::parse(r.out);
  };
  const auto text = serve({});
  CHECK(text["cross_attention"].is_null());
  const auto four = serve({"--images", "1"});
  CHECK(four["cross_attention"]["encoder_tokens"] == 4 * 1601);
  CHECK(four["cross_attention"]["encoder_blocks"] == 401);  // ceil(6,404 / 16)
  CHECK(four["cross_attention"]["decoder_blocks"] == 256);
  const uint64_t blocks = four["gpu_blocks"];
  CHECK(four["cross_attention"]["requests"] == blocks / (256 + 401));
  const auto one = serve({"--images", "1", "--image-size", "448"});
  CHECK(one["cross_attention"]["encoder_tokens"] == 1601);
  CHECK(one["cross_attention"]["encoder_blocks"] == 101);  // ceil(1,601 / 16)
  // the pool itself is the text-only one: a block spans all 40 layers either way
  CHECK(four["block_bytes"] == text["block_bytes"]);
}

TEST_CASE("training Gemma 3 4B with an image: SigLIP's 4,096 patch tokens, the pooling projector",
          "[cli][vision]") {
  const std::string g = std::string(MEMPLAN_TEST_DATA_DIR) + "/hf_configs/gemma-3-4b-it.json";
  auto act = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = {"estimate", "--config", g, "--precision", "bf16", "--format", "json"};
    a.insert(a.end(), extra.begin(), extra.end());
    return vision_activations(a);
  };
  // The language model sees 100 + 256 (mm_tokens_per_image) tokens either way. Frozen tower, trained
  // projector (Gemma3MultiModalProjector): its RMSNorm keeps the normalised fp32 tensor for the
  // weight's gradient (256 x 1152 x 4 B) and the matmul its bf16 input (256 x 1152 x 2 B).
  const uint64_t text_only = act({"--seq", "356"});
  const uint64_t projector = 256ull * 1152 * 4 + 256ull * 1152 * 2;
  CHECK(act({"--seq", "100", "--images", "1"}) - text_only == projector);
  // Trained: 27 SigLIP layers over (896 / 14)^2 = 4,096 tokens (hidden 1152, 16 heads, MLP 4304,
  // gelu_pytorch_tanh: its input and output), sdpa; post_layernorm's input and stats; the projector
  // now also keeps the avg-pool's input (4,096 x 1152 bf16), the RMSNorm's fp32 input and rsqrt.
  const uint64_t sh = 4096ull * 1152 * 2, stats = 4096ull * 2 * 4;
  const uint64_t layer = 2 * (sh + stats + sh) + 4 * sh + 16ull * 4096 * 4 + 2ull * 4096 * 4304 * 2;
  const uint64_t trained_projector = projector + sh + 256ull * 1152 * 4 + 256ull * 4;
  CHECK(act({"--seq", "100", "--images", "1", "--train-vision"}) - text_only ==
        27 * layer + sh + stats + trained_projector);
}

TEST_CASE("training Qwen2-VL-7B with two images: one patch sequence, the frozen tower's quadratic mask named",
          "[cli][vision]") {
  // By hand from transformers' modeling_qwen2_vl.py. A 448 px image: (448 / 28)^2 = 256 language-model
  // tokens = 1,024 patches of 14 x 14 (PatchMerger folds 2 x 2); two images: one sequence of 2,048
  // patches. The tower (32 blocks, width 1,280, 16 heads, MLP 5,120) is frozen: nothing saved. The
  // merger trains and keeps, per image, bf16: ln_q's input 1,024 x 1,280 x 2 B, its fp32 mean and
  // rstd 1,024 x 2 x 4 B, mlp.0's input, GELU's input and output, each 256 x 5,120 x 2 B.
  const std::string q = std::string(MEMPLAN_TEST_DATA_DIR) + "/hf_configs/Qwen2-VL-7B-Instruct.json";
  const std::vector<std::string> base = {"estimate", "--config", q,     "--precision",
                                         "bf16",     "--format", "json"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = base;
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  const uint64_t text_only = vision_activations(with({"--seq", "612"}));
  const uint64_t two = vision_activations(with({"--seq", "100", "--images", "2", "--image-size", "448"}));
  const uint64_t merger = 1024ull * 1280 * 2 + 1024ull * 2 * 4 + 3 * 256ull * 5120 * 2;
  CHECK(merger == 10493952ull);
  CHECK(two - text_only == 2 * merger);
  // Measured on the CPU (bench/accuracy/qwen_merger_saved.py, tests/data/qwen_merger_cpu_saved.txt):
  // bf16 10,489,856 B with the CPU's bf16 LayerNorm stats (2 x 2,048 B; CUDA keeps them fp32:
  // 2 x 4,096 B), fp32 20,979,712 B.
  CHECK(merger == 10489856ull - 2 * 2048 + 2 * 4096);
  CHECK(vision_activations({"estimate", "--config", q, "--precision", "fp32", "--format", "json", "--seq",
                            "100", "--images", "1", "--image-size", "448"}) -
            vision_activations(
                {"estimate", "--config", q, "--precision", "fp32", "--format", "json", "--seq", "356"}) ==
        20979712ull);
  // --lora: the merger is frozen too; nothing beside the tokens.
  CHECK(vision_activations(with({"--seq", "100", "--images", "2", "--image-size", "448", "--lora", "16"})) ==
        vision_activations(with({"--seq", "612", "--lora", "16"})));

  // The frozen tower's working set over the whole sample. Eager: the block input, norm1's output,
  // qkv (3 rows) and the rotated q and k: 7 x 2,048 x 1,280 x 2 B; the 2,048 x 2,048 bf16 mask
  // (finfo.min outside each image's block); at the softmax 16 heads x 2,048^2 masked scores (bf16),
  // their fp32 softmax and its bf16 cast back. 4 x the patches would be 16 x the mask and scores.
  const uint64_t eager = 7ull * 2048 * 1280 * 2 + 2048ull * 2048 * 2 + 16ull * 2048 * 2048 * (2 + 4 + 2);
  CHECK(eager == 581959680ull);
  const auto ex = run_cli({"estimate", "--config", q, "--precision", "bf16", "--seq", "100", "--images", "2",
                           "--image-size", "448", "--attention", "eager", "--explain"});
  REQUIRE(ex.code == 0);
  CHECK(ex.out.find(
            "over the 2,048 patches of a sample, one sequence, its largest working set of 581,959,680 B") !=
        std::string::npos);
  CHECK(ex.out.find("[vision] merger GELU input") != std::string::npos);
  // sdpa: the MLP is larger (2 rows of 2,048 x 1,280 + 3 of 2,048 x 5,120, bf16) than the attention
  // (8 rows, the bool mask and its bf16 additive copy: 54,525,952 B).
  const uint64_t mlp = (2ull * 2048 * 1280 + 3ull * 2048 * 5120) * 2;
  const auto sd = run_cli({"estimate", "--config", q, "--precision", "bf16", "--seq", "100", "--images", "2",
                           "--image-size", "448", "--attention", "sdpa", "--explain"});
  CHECK(sd.out.find("largest working set of 73,400,320 B") != std::string::npos);
  CHECK(mlp == 73400320ull);
}

TEST_CASE("training Qwen2.5-VL-7B with an image: RMSNorm merger, gated MLP", "[cli][vision]") {
  // 448 px: 1,024 patches. The merger's ln_q is an RMSNorm: it keeps the normalised input cast back
  // (1,024 x 1,280 x 2 B), then mlp.0's, GELU's input and output (256 x 5,120 x 2 B each).
  const std::string q = std::string(MEMPLAN_TEST_DATA_DIR) + "/hf_configs/Qwen2.5-VL-7B-Instruct.json";
  const std::vector<std::string> base = {"estimate", "--config", q,     "--precision",
                                         "bf16",     "--format", "json"};
  const auto a = [&](std::vector<std::string> extra) {
    std::vector<std::string> v = base;
    v.insert(v.end(), extra.begin(), extra.end());
    return vision_activations(v);
  };
  CHECK(a({"--seq", "100", "--images", "1", "--image-size", "448"}) - a({"--seq", "356"}) ==
        1024ull * 1280 * 2 + 3 * 256ull * 5120 * 2);
  // Measured on the CPU (bench/accuracy/qwen_merger_saved.py): 10,485,760 B.
  CHECK(1024ull * 1280 * 2 + 3 * 256ull * 5120 * 2 == 10485760ull);
  // sdpa: the gated MLP (silu(gate), up, their product: 3 x 1,024 x 3,420, + 2 rows of 1,024 x 1,280)
  const auto sd = run_cli({"estimate", "--config", q, "--precision", "bf16", "--seq", "100", "--images", "1",
                           "--image-size", "448", "--attention", "sdpa", "--explain"});
  CHECK(sd.out.find("largest working set of " + std::string("26,255,360") + " B") != std::string::npos);
  CHECK((2ull * 1024 * 1280 + 3ull * 1024 * 3420) * 2 == 26255360ull);
}

TEST_CASE("training Llama 4 Scout with an image: the frozen tower's tiles, the projector's input",
          "[cli][vision][many-runs]") {
  // Llama4ForConditionalGeneration: the tower (34 layers, 1408 wide) runs every tile frozen and
  // keeps nothing; Llama4MultiModalProjector.linear_1 (4096 -> 5120, no bias) keeps its input, the
  // pixel-shuffle adapter's 144 tokens x 4096 a tile. One tile (no --image-size): 144 + 3 tokens.
  const std::string s = std::string(MEMPLAN_TEST_DATA_DIR) + "/hf_configs/Llama-4-Scout-17B-16E.json";
  const std::vector<std::string> base = {"estimate", "--config", s,     "--precision",
                                         "bf16",     "--format", "json"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = base;
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  const uint64_t text_one = vision_activations(with({"--seq", "247"}));
  const uint64_t one = vision_activations(with({"--seq", "100", "--images", "1"}));
  CHECK(one - text_one == 144ull * 4096 * 2);
  // --image-size 672: a 2 x 2 canvas of 336 px tiles and the global one, 5 tiles: 3 + 144 + 4 x 145 =
  // 727 tokens in the sequence, 5 x 144 rows at the projector.
  const uint64_t text_five = vision_activations(with({"--seq", "827"}));
  const uint64_t five = vision_activations(with({"--seq", "100", "--images", "1", "--image-size", "672"}));
  CHECK(five - text_five == 5 * 144ull * 4096 * 2);
  // LoRA: tower and projector frozen, nothing beside the tokens.
  CHECK(vision_activations(with({"--seq", "100", "--images", "1", "--lora", "16"})) ==
        vision_activations(with({"--seq", "247", "--lora", "16"})));
  // The frozen tower's working set, named: at the end of vision_apply_rotary_emb, over 577 tokens x
  // 1408, 7 bf16 rows and 4 fp32 ones: 577 x 1408 x (7 x 2 + 4 x 4) = 24,372,480 B a tile (its MLP:
  // 577 x (3 x 1408 + 2 x 5632) x 2 = 17,873,152 B, less).
  const auto ex = run_cli(
      {"estimate", "--config", s, "--precision", "bf16", "--seq", "100", "--images", "1", "--explain"});
  REQUIRE(ex.code == 0);
  CHECK(ex.out.find("its largest layer's 24,372,480 B per image of working memory") != std::string::npos);
  const auto ex5 = run_cli({"estimate", "--config", s, "--precision", "bf16", "--seq", "100", "--images", "1",
                            "--image-size", "672", "--explain"});
  CHECK(ex5.out.find("its largest layer's 121,862,400 B per image of working memory") != std::string::npos);
  // Its trained tower is not in the ledger: refused, naming the flag.
  const auto tv = run_cli(
      {"estimate", "--config", s, "--precision", "bf16", "--seq", "100", "--images", "1", "--train-vision"});
  CHECK(tv.code == 2);
  CHECK(tv.err.find("memplan: error: --train-vision: the llama4_vision_model tower's saved tensors") == 0);
}
