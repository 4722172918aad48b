#pragma once
// What memplan knows about a model: its parameter count and, when known, its architecture.
// Filled by presets (data/model_presets.json), --config (Hugging Face config.json),
// --safetensors / --gguf headers, --mlp, or bare flags.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace memplan {

// A transformer, decoder (causal LM) or encoder, in the terms the activation model needs.
struct TransformerArch {
  std::string model_type;  // "llama", "gpt2", "bert", ... as config.json names it
  bool causal = true;      // decoder-only causal LM: keeps batch x seq x vocab logits
  uint64_t layers = 0;
  uint64_t hidden = 0;
  uint64_t heads = 0;
  uint64_t kv_heads = 0;      // grouped-query attention; == heads for multi-head attention
  uint64_t head_dim = 0;      // usually hidden / heads
  uint64_t intermediate = 0;  // MLP inner width (per expert for MoE)
  uint64_t vocab = 0;
  uint64_t max_positions = 0;       // context length the model was trained for (0 = unknown)
  bool gated_mlp = false;           // SwiGLU/GeGLU: 3 matrices (gate, up, down) instead of 2
  std::string activation = "gelu";  // "gelu", "gelu_new", "silu", "relu", ...
  std::string norm = "layernorm";   // "layernorm" or "rmsnorm"
  // Block layout details the activation model and the reference parameter counter use.
  bool norm_first = true;           // pre-LN (GPT-2, LLaMA); false = post-LN (BERT, torch encoder default)
  bool parallel_attention = false;  // attention and MLP read the same layer input (GPT-NeoX, Falcon, GPT-J)
  bool fused_qkv = false;           // one q/k/v projection (GPT-2 c_attn, torch MHA in_proj)
  bool ffn_dropout = false;         // dropout between the MLP's matrices (torch nn.TransformerEncoderLayer)
  bool final_norm = true;           // a norm after the last layer (ln_f / model.norm)
  bool bias = false;                // Linear layers have biases (GPT-2, BERT) - parameter counting only
  std::string position_embedding =
      "rotary";                  // "learned" (a max_positions x hidden table), "rotary", "alibi", "none"
  bool tied_embeddings = false;  // lm_head shares the embedding matrix
  double hidden_dropout = 0.0;   // dropout probability on residual branches (0 = off)
  double attention_dropout = 0.0;
  uint64_t experts = 0;  // MoE: experts per layer (0 = dense)
  uint64_t experts_per_token = 0;
  bool encoder_decoder = false;  // t5: `layers` counts the encoder, `decoder_layers` the decoder
  // Encoders (bert, roberta): the head trained on top, from architectures[0] of config.json: "mlm"
  // (...ForMaskedLM), "classification" (...ForSequenceClassification, `labels` classes), "" none.
  std::string encoder_head;
  uint64_t labels = 0;
  uint64_t decoder_layers = 0;  // encoder-decoder only (the decoder also has cross-attention)
  // Fine-grained mixture of experts (Qwen-MoE, DeepSeek, OLMoE, gpt-oss, Llama 4). With experts,
  // `intermediate` is the dense MLP's width and these say what differs per layer kind.
  uint64_t expert_intermediate =
      0;                        // one routed expert's inner width (moe_intermediate_size); 0 = intermediate
  uint64_t shared_experts = 0;  // experts every token runs besides the routed ones (n_shared_experts)
  uint64_t shared_intermediate = 0;  // inner width of the shared experts together (0 = none)
  uint64_t dense_layers = 0;        // layers with a dense MLP instead of experts (first_k_dense_replace, ...)
  uint64_t dense_intermediate = 0;  // their inner width when it is not `intermediate` (Llama 4)
  // Multi-head latent attention (DeepSeek-V2/V3); kv_lora_rank 0 = ordinary attention.
  uint64_t q_lora_rank = 0;  // 0 = q projected directly
  uint64_t kv_lora_rank = 0;
  uint64_t qk_nope_head_dim = 0;
  uint64_t qk_rope_head_dim = 0;
  uint64_t v_head_dim = 0;
  uint64_t mtp_layers = 0;  // multi-token-prediction modules after the last layer (not in `layers`)
  // Attention kinds: `window_layers` of the layers attend to at most `attention_window` tokens
  // (sliding window; chunked: within a chunk of that size); the others to the whole context.
  uint64_t window_layers = 0;
  uint64_t attention_window = 0;
  bool chunked_attention = false;  // Llama 4's attention_chunk_size rather than a sliding window
  bool attention_sinks = false;    // gpt-oss: one learned sink logit per head (no cache memory)
  // Norms on q and k before rotary: "" none; "head" one RMSNorm over each head's head_dim (Qwen3,
  // Qwen3-MoE, Gemma 3, Command-R's use_qk_norm); "all" one over all of q's (k's) heads at once
  // (OLMo 2, OLMoE). The activation ledger keeps what those norms save for backward.
  std::string qk_norm;
  // The MLP's activation is written out in Python ops, so autograd keeps its pieces: Hugging
  // Face's gelu_new (NewGELUActivation). false: one fused function (F.gelu, F.silu, ...).
  bool python_gelu = false;
  // Cross-attention layers (Llama 3.2 Vision, mllama): `cross_attention_layers` of the `layers`
  // attend to the image features instead of the text, so their KV cache holds
  // `cross_attention_tokens` per sequence (the images' tiles x (patches + 1), set from the
  // request's images) and no text tokens.
  uint64_t cross_attention_layers = 0;
  uint64_t cross_attention_tokens = 0;
  // Soft-capping (Gemma 2: attn_logit_softcapping, final_logit_softcapping; 0 = none): the scores
  // (logits) become cap x tanh(x / cap). tanh keeps its output for backward: heads x s x s per layer
  // under eager attention (sdpa and flash keep none of it), batch x seq x vocab for the logits.
  double attn_softcap = 0.0;
  double final_softcap = 0.0;

  bool mla() const { return kv_lora_rank > 0; }
  uint64_t moe_layers() const { return experts ? layers - dense_layers : 0; }

  uint64_t resolved_head_dim() const { return head_dim ? head_dim : (heads ? hidden / heads : 0); }
  uint64_t resolved_kv_heads() const { return kv_heads ? kv_heads : heads; }
};

// The vision tower of a vision-language model whose encoder layers the activation ledger counts
// (vision_activations.cpp): ViT layers (pre-LayerNorm, q/k/v/out Linears with biases, full
// bidirectional attention over one image's tokens, a two-matrix MLP) and the projector after them.
struct VisionTower {
  std::string model_type;    // "clip_vision_model" (LLaVA), "siglip_vision_model" (Gemma 3)
  uint64_t layers = 0;       // encoder layers in the tower
  uint64_t used_layers = 0;  // layers whose output reaches the language model (LLaVA's
                             // vision_feature_layer -2: all but the last)
  uint64_t hidden = 0;
  uint64_t heads = 0;
  uint64_t intermediate = 0;
  uint64_t tokens = 0;     // tokens per image through every layer (patches, + CLIP's class token)
  std::string activation;  // "quick_gelu" (x * sigmoid(1.702 x), Python ops) or "gelu_pytorch_tanh"
  std::string projector;   // "llava_mlp" (linear, GELU, linear) or "gemma3" (avg-pool, RMSNorm, matrix)
  uint64_t projector_tokens = 0;  // tokens out of the projector per image (language-model tokens)
  uint64_t text_hidden = 0;       // the language model's width (the projector's output)
  // Qwen2-VL / Qwen2.5-VL: spatial_merge_size (0 for the towers above). All images of a sample are
  // one patch sequence (`tokens` per image, set from --image-size); each block attends within each
  // image through a block-diagonal mask over the whole sequence; the PatchMerger folds merge x merge
  // patches into one language-model token.
  uint64_t merge = 0;
  std::string norm;        // "layernorm" (Qwen2-VL) or "rmsnorm" (Qwen2.5-VL)
  bool gated_mlp = false;  // Qwen2.5-VL: down(silu(gate(x)) * up(x))
  // Llama 4: every tile of an image runs through the tower (`tokens` each: patches + the class
  // token); the pixel-shuffle adapter hands the projector `projector_tokens` per tile of
  // `projector_width` features.
  uint64_t tiles = 0;  // tiles per image (1, or k x k + the global one); 0 for untiled towers
  uint64_t projector_width = 0;
};

// One kind of layer of a model read from a config.json (dense or MoE MLP, multi-token prediction,
// full / sliding / chunked attention): how many layers, what one of them holds, and which config
// fields said so. `memplan inspect` lists them.
struct LayerKind {
  std::string kind;                    // "dense", "moe", "mtp", "full attention", "sliding attention", ...
  uint64_t layers = 0;                 // layers of this kind
  uint64_t parameters = 0;             // parameters of one such layer (MLP kinds; 0 for attention kinds)
  uint64_t kv_elements_per_token = 0;  // attention kinds: cached elements per token in one layer
  uint64_t window = 0;                 // attention kinds: tokens a layer attends to (0 = all)
  std::string counted;                 // what was counted, in words
  std::string fields;                  // the config fields that decided it
};

// The model being planned. `parameters` is always set; the rest is known or zero/empty.
struct ModelSpec {
  std::string id;                  // preset id, file path, or "custom"
  std::string name;                // human name
  std::string source;              // where the parameter count comes from (citation or file)
  uint64_t parameters = 0;         // total parameters
  uint64_t active_parameters = 0;  // MoE: parameters used per token (0 = same as total)
  uint64_t tensors = 0;            // number of parameter tensors (Adam's step counters); 0 = unknown
  std::optional<TransformerArch> arch;
  std::vector<uint64_t> mlp_widths;  // --mlp 784,512,256,10
  bool has_batchnorm = false;        // accumulation does not reproduce a large batch with BatchNorm
  std::string weight_format;         // format the weights are stored in (from a file), "" = unknown
  uint64_t weight_bytes = 0;         // exact bytes of the stored weights when read from a file (0 = unknown)
  std::vector<std::string> notes;    // what was assumed while reading the model
  uint64_t image_tokens = 0;         // vision-language model: language-model tokens per image (0 = text only)
  uint64_t mtp_parameters =
      0;  // multi-token-prediction modules stored beside the model (not in `parameters`)
  std::vector<LayerKind> layer_kinds;  // per layer kind, when read from a config.json
  std::string assumption;              // set when a config was counted by an assumed layout (assume_llama)
  // Dynamic-resolution vision-language models (Qwen2-VL): one language-model token per
  // image_token_pixels x image_token_pixels square of the resized image; 0 = image_tokens per image.
  uint64_t image_token_pixels = 0;
  // Tiled vision encoders (mllama): an image is cut into up to max_image_tiles tiles of
  // image_tile_pixels x image_tile_pixels, each giving image_tile_tokens features (patches + 1).
  uint64_t image_tile_tokens = 0;
  uint64_t max_image_tiles = 0;
  uint64_t image_tile_pixels = 0;
  // The vision tower the activation ledger counts for training with images (LLaVA, Gemma 3).
  std::optional<VisionTower> vision;
  // The Hugging Face repository id ("meta-llama/Meta-Llama-3-8B"; presets), "" = unknown.
  std::string hf_repo;
};

// How model files are read.
struct ModelReadOptions {
  // Count a config.json whose model_type memplan does not know as a llama-style decoder from its
  // generic fields (hidden_size, num_hidden_layers, ...) instead of refusing it; the result names
  // the assumption (ModelSpec::assumption).
  bool assume_llama = false;
};

}  // namespace memplan
