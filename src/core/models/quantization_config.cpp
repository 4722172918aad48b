// quantization_config -> the tensors a quantised checkpoint stores per linear layer, and their
// bytes. Shapes per method, from the code that saves them:
//   gptq (AutoGPTQ / GPTQModel QuantLinear buffers): qweight int32 [in/32*bits, out], qzeros int32
//     [ceil(in/g), out/32*bits], scales fp16 [ceil(in/g), out], g_idx int32 [in] (registered for
//     every layer, desc_act or not); group_size -1 = one group of `in`.
//   awq GEMM (AutoAWQ WQLinear_GEMM): qweight int32 [in, out*bits/32], qzeros int32 [in/g, out*bits/32],
//     scales fp16 [in/g, out].
//   bitsandbytes 4-bit (Params4bit + QuantState.as_dict(packed=True)): uint8 codes [ceil(in*out/2)],
//     absmax per 64 elements (fp32; with double quantisation uint8 plus nested_absmax fp32 per 256
//     blocks and a 256-entry fp32 nested_quant_map), quant_map fp32 [16], and a packed JSON tensor.
//   bitsandbytes 8-bit (Int8Params): int8 [out, in], SCB fp32 [out], weight_format uint8 [1].
//   fp8 (transformers FineGrainedFP8 / DeepSeek-V3): fp8 [out, in], weight_scale_inv fp32
//     [ceil(out/bo), ceil(in/bi)] for weight_block_size [bo, bi]; one fp32 scale without blocks.
//   mxfp4 (gpt-oss): _blocks uint8 [out, in/32, 16] + _scales uint8 [out, in/32] = 17 B per 32.
//   compressed-tensors pack-quantized: weight_packed int32 [out, in*bits/32], weight_scale
//     [out, groups] and weight_zero_point int32 [ceil(out*bits/32), groups] (asymmetric only) in the
//     model dtype, weight_shape int64 [2]; float-quantized: fp8 weight [out, in] + weight_scale.
#include "core/models/quantization_config.hpp"

#include <algorithm>
#include <functional>
#include <optional>
#include <regex>

#include <memplan/error.hpp>
#include <memplan/quantity.hpp>
#include "core/base/checked.hpp"
#include "core/base/json_text.hpp"
#include "core/base/text.hpp"
#include "core/models/module_names.hpp"
#include "core/models/quant_reader.hpp"

namespace memplan::detail {

namespace {

using namespace quant;

uint64_t bits_of(const QuantReader& q, const char* key, std::initializer_list<uint64_t> allowed) {
  const uint64_t b = q.count(key).value_or(4);
  if (std::find(allowed.begin(), allowed.end(), b) == allowed.end()) {
    std::string list;
    for (uint64_t a : allowed) list += (list.empty() ? "" : ", ") + to_s(a);
    q.fail(key, to_s(b) + " bits is not one memplan counts (expected " + list + ")");
  }
  return b;
}

void need_multiple(const QuantReader& q, const char* key, uint64_t n, uint64_t m, const std::string& what) {
  if (n % m != 0) q.fail(key, what + " " + to_s(n) + " is not a multiple of " + to_s(m));
}

Scheme gptq(const QuantReader& q, const std::vector<LinearGroup>& groups, std::vector<std::string>& notes) {
  const uint64_t bits = bits_of(q, "bits", {2, 3, 4, 8});
  bool no_groups = false;
  const std::optional<uint64_t> gs = q.count("group_size", &no_groups);
  if (const auto fmt = q.text("checkpoint_format"); fmt && *fmt != "gptq" && *fmt != "gptq_v2")
    q.fail("checkpoint_format", "\"" + *fmt + "\" is not a layout memplan counts (expected gptq or gptq_v2)");
  const bool lm_head = q.flag("lm_head", false);
  // modules_in_block_to_quantize: [[names...], ...] when only some block modules are quantised.
  std::vector<std::string> only_names;
  if (const nlohmann::json* m = q.find("modules_in_block_to_quantize")) {
    if (!m->is_array()) q.fail("modules_in_block_to_quantize", "is not a list of lists of module names");
    for (const nlohmann::json& inner : *m) {
      if (!inner.is_array()) q.fail("modules_in_block_to_quantize", json_brief(inner) + " is not a list");
      for (const nlohmann::json& n : inner) {
        if (!n.is_string()) q.fail("modules_in_block_to_quantize", json_brief(n) + " is not a module name");
        only_names.push_back(n.get<std::string>());
      }
    }
  }
  const NameList only = name_list(q.subject("modules_in_block_to_quantize"), only_names, false);
  for (const LinearGroup& g : groups) {
    if (g.name == "lm_head" && !lm_head) continue;
    need_multiple(q, "bits", g.in, 32, g.name + " in_features");
    need_multiple(q, "bits", mul(g.out, bits), 32, g.name + " out_features x bits");
  }
  notes.push_back(
      "gptq " + to_s(bits) + "-bit, " +
      (gs ? "group size " + to_s(*gs) : std::string("one group per column (group_size -1)")) +
      (q.flag("desc_act", false) ? ", desc_act" : "") +
      ": per linear layer qweight int32 [in/32*bits, out], qzeros int32 [groups, out/32*bits], "
      "scales fp16 [groups, out], g_idx int32 [in] (AutoGPTQ saves g_idx with or without desc_act)");
  Scheme s;
  s.format = int_format(bits);
  s.bytes = [bits, gs](uint64_t in, uint64_t out) {
    const uint64_t G = gs ? ceil_div(in, *gs) : 1;
    const uint64_t qweight = mul(mul(in / 32 * bits, out), 4);
    const uint64_t qzeros = mul(mul(G, out / 32 * bits), 4);
    const uint64_t scales = mul(mul(G, out), 2);
    return add(add(qweight, qzeros), add(scales, mul(in, 4)));
  };
  s.quantized = [lm_head, only](const LinearGroup& g, const std::string& module) {
    if (g.name == "lm_head") return lm_head;
    return only.empty() || any_match(only, module);
  };
  return s;
}

Scheme awq(const QuantReader& q, const std::vector<LinearGroup>& groups, std::vector<std::string>& notes) {
  const uint64_t bits = bits_of(q, q.find("w_bit") ? "w_bit" : "bits", {4});
  const char* gkey = q.find("q_group_size") ? "q_group_size" : "group_size";
  const uint64_t gs = q.count(gkey).value_or(128);
  const std::string version = to_lower(q.text("version").value_or("gemm"));
  if (version != "gemm")
    q.fail("version", "\"" + version + "\" is not a layout memplan counts (expected gemm)");
  const bool zero_point = q.flag("zero_point", true);
  const NameList skip =
      name_list(q.subject("modules_to_not_convert"), q.names("modules_to_not_convert"), false);
  for (const LinearGroup& g : groups)
    if (g.name != "lm_head" && !any_match(skip, module_name(g, 0))) {
      need_multiple(q, gkey, g.in, gs, g.name + " in_features");
      need_multiple(q, "bits", mul(g.out, bits), 32, g.name + " out_features x bits");
    }
  notes.push_back("awq " + to_s(bits) + "-bit GEMM, group size " + to_s(gs) +
                  ": per linear layer qweight int32 [in, out*bits/32], qzeros int32 [in/g, out*bits/32], "
                  "scales fp16 [in/g, out]; lm_head" +
                  (skip.empty() ? std::string() : " and modules_to_not_convert") + " stay unquantised");
  Scheme s;
  s.format = int_format(bits);
  s.bytes = [bits, gs](uint64_t in, uint64_t out) {
    const uint64_t packed_cols = out * bits / 32;
    const uint64_t G = in / gs;
    return add(add(mul(mul(in, packed_cols), 4), mul(mul(G, packed_cols), 4)), mul(mul(G, out), 2));
  };
  (void)zero_point;  // AutoAWQ saves qzeros either way
  s.quantized = [skip](const LinearGroup& g, const std::string& module) {
    return g.name != "lm_head" && !any_match(skip, module);
  };
  return s;
}

// torch.dtype's name as bitsandbytes writes it into the packed quant_state ("bfloat16").
std::string torch_dtype_name(const std::string& format) {
  if (format == "bf16") return "bfloat16";
  if (format == "fp16") return "float16";
  if (format == "fp32") return "float32";
  return format;
}

// The packed quant_state of one 4-bit matrix: QuantState.as_dict(packed=True) keeps its non-tensor
// entries and stores json.dumps of them as a uint8 tensor ("quant_state.bitsandbytes__nf4"):
//   {"quant_type": "nf4", "blocksize": 64, "dtype": "bfloat16", "shape": [out, in]} and, with double
//   quantisation, , "nested_blocksize": 256, "nested_dtype": "float32", "nested_offset": <float>.
// The text is counted exactly except the nested_offset number, whose digits depend on the weights.
uint64_t quant_state_json_bytes(const std::string& type, const std::string& dtype, bool dq, uint64_t in,
                                uint64_t out) {
  std::string t = "{\"quant_type\": \"" + type + "\", \"blocksize\": 64, \"dtype\": \"" + dtype +
                  "\", \"shape\": [" + to_s(out) + ", " + to_s(in) + "]";
  if (dq) t += ", \"nested_blocksize\": 256, \"nested_dtype\": \"float32\", \"nested_offset\": ";
  t += "}";
  return t.size();
}

Scheme bitsandbytes(const QuantReader& q, const std::string& weight_format, std::vector<std::string>& notes) {
  const bool four = q.flag("load_in_4bit", false);
  const bool eight = q.flag("load_in_8bit", false);
  if (four == eight)
    q.fail(four ? "load_in_8bit" : "load_in_4bit",
           "exactly one of load_in_4bit and load_in_8bit must be true for a bitsandbytes checkpoint");
  // transformers: llm_int8_skip_modules replaces the default (the output embeddings, lm_head).
  std::vector<std::string> skip = q.names("llm_int8_skip_modules");
  const bool default_skip = !q.find("llm_int8_skip_modules");
  if (default_skip) skip = {"lm_head"};
  Scheme s;
  s.quantized = [skip = name_list(q.subject("llm_int8_skip_modules"), skip, false)](
                    const LinearGroup&, const std::string& module) { return !any_match(skip, module); };
  const std::string kept = default_skip ? "lm_head (the default)" : "llm_int8_skip_modules";
  if (eight) {
    s.format = "int8";
    s.bytes = [](uint64_t in, uint64_t out) { return add(add(mul(in, out), mul(out, 4)), 1); };
    notes.push_back(
        "bitsandbytes 8-bit: per linear layer int8 weight [out, in], SCB fp32 [out], "
        "weight_format uint8 [1]; " +
        kept + " and embeddings stay 16-bit");
    return s;
  }
  const std::string type = q.text("bnb_4bit_quant_type").value_or("fp4");
  if (type != "nf4" && type != "fp4") q.fail("bnb_4bit_quant_type", "\"" + type + "\" is not nf4 or fp4");
  const bool dq = q.flag("bnb_4bit_use_double_quant", false);
  s.format = type == "nf4" ? (dq ? "nf4-dq" : "nf4") : "int4";
  const std::string dtype = torch_dtype_name(weight_format);
  s.bytes = [dq, type, dtype](uint64_t in, uint64_t out) {
    const uint64_t n = mul(in, out);
    const uint64_t blocks = ceil_div(n, 64);
    uint64_t b = add(ceil_div(n, 2), 16 * 4);  // codes + quant_map
    b = add(b, quant_state_json_bytes(type, dtype, dq, in, out));
    if (dq)
      b = add(add(b, blocks), add(mul(ceil_div(blocks, 256), 4), 256 * 4));  // absmax u8, nested absmax, map
    else
      b = add(b, mul(blocks, 4));
    return b;
  };
  notes.push_back(
      "bitsandbytes 4-bit " + type + (dq ? " with double quantisation" : "") +
      ": per linear layer packed uint8 codes [in*out/2], absmax per 64 elements, quant_map" +
      (dq ? std::string(", nested_absmax fp32 per 256 blocks, nested_quant_map fp32 [256]") : std::string()) +
      " and the packed JSON quant_state (its text counted byte by byte" +
      (dq ? std::string(" but for the nested_offset number, 1 to 24 digits a matrix that depend on the "
                        "weights")
          : std::string()) +
      "); " + kept + " and embeddings stay 16-bit");
  return s;
}

Scheme fp8(const QuantReader& q, const std::vector<LinearGroup>& groups, std::vector<std::string>& notes) {
  if (const auto fmt = q.text("fmt"); fmt && *fmt != "e4m3")
    q.fail("fmt", "\"" + *fmt + "\" is not e4m3 (the format fp8 checkpoints store)");
  uint64_t bo = 0, bi = 0;
  if (const nlohmann::json* b = q.find("weight_block_size")) {
    if (!b->is_array() || b->size() != 2 || !(*b)[0].is_number_unsigned() || !(*b)[1].is_number_unsigned() ||
        (*b)[0].get<uint64_t>() == 0 || (*b)[1].get<uint64_t>() == 0)
      q.fail("weight_block_size", json_brief(*b) + " is not [rows, columns] of whole numbers");
    bo = (*b)[0].get<uint64_t>();
    bi = (*b)[1].get<uint64_t>();
  }
  std::vector<std::string> skip = q.names("modules_to_not_convert");
  const std::vector<std::string> ignored = q.names("ignored_layers");  // AutoFP8's name for the same list
  skip.insert(skip.end(), ignored.begin(), ignored.end());
  skip.push_back("lm_head");  // transformers' FineGrainedFP8 quantizer never converts the output layer
  // activation_scheme "static" (AutoFP8, vLLM's Fp8LinearMethod): each quantised layer also stores
  // its calibrated input_scale, one fp32 scalar; "dynamic" computes it per token at run time.
  const std::string act = q.text("activation_scheme").value_or("dynamic");
  if (act != "dynamic" && act != "static")
    q.fail("activation_scheme", "\"" + printable(act, 40) + "\" is not dynamic or static");
  const bool static_act = act == "static";
  (void)groups;
  notes.push_back(
      bo ? "fp8 e4m3 with " + to_s(bo) + "x" + to_s(bi) +
               " block scales: per linear layer weight [out, in] in 1 byte, weight_scale_inv fp32 "
               "[ceil(out/" +
               to_s(bo) + "), ceil(in/" + to_s(bi) +
               ")] (DeepSeek-V3's layout; some later checkpoints store these scales in bf16)"
         : "fp8 e4m3 per tensor: per linear layer weight [out, in] in 1 byte and one fp32 scale");
  if (static_act)
    notes.push_back("fp8 activation_scheme static: each quantised layer also stores an fp32 input_scale");
  notes.push_back("fp8: lm_head" +
                  std::string(skip.size() > 1 ? ", modules_to_not_convert / ignored_layers" : "") +
                  ", embeddings and norms stay in torch_dtype");
  Scheme s;
  s.format = "fp8-e4m3";
  s.bytes = [bo, bi, static_act](uint64_t in, uint64_t out) {
    const uint64_t scales = bo ? mul(ceil_div(out, bo), ceil_div(in, bi)) : 1;
    return add(mul(in, out), mul(add(scales, static_act ? 1 : 0), 4));
  };
  s.quantized = [skip = name_list(q.subject("modules_to_not_convert"), skip, false)](
                    const LinearGroup&, const std::string& module) { return !any_match(skip, module); };
  return s;
}

Scheme mxfp4(const QuantReader& q, const std::vector<LinearGroup>& groups, std::vector<std::string>& notes) {
  std::vector<std::string> skip = q.names("modules_to_not_convert");
  if (std::none_of(skip.begin(), skip.end(), [](const std::string& p) { return p == "lm_head"; }))
    skip.push_back("lm_head");
  Scheme s;
  s.quantized = [skip = name_list(q.subject("modules_to_not_convert"), skip, false)](
                    const LinearGroup&, const std::string& module) { return !any_match(skip, module); };
  for (const LinearGroup& g : groups)
    if (s.quantized(g, module_name(g, 0)))
      need_multiple(q, "quant_method", g.in, 32, g.name + " in_features");
  notes.push_back(
      "mxfp4: per quantised matrix _blocks uint8 [out, in/32, 16] + _scales uint8 [out, in/32] = "
      "17 bytes per 32 weights; modules_to_not_convert stay in torch_dtype");
  s.format = "mxfp4";
  s.bytes = [](uint64_t in, uint64_t out) { return mul(mul(out, in / 32), 17); };
  return s;
}

}  // namespace

std::vector<LinearGroup> linear_groups(const TransformerArch& a, const ParameterLayout& l) {
  std::vector<LinearGroup> g;
  const uint64_t L = a.layers, h = a.hidden, hd = a.resolved_head_dim();
  const uint64_t q = mul(a.heads, hd), kv = mul(a.resolved_kv_heads(), hd),
                 I = a.intermediate ? a.intermediate : mul(4, h);
  if (a.mla()) {  // DeepSeek's latent attention: the projections as modeling_deepseek names them
    const uint64_t qhd = add(a.qk_nope_head_dim, a.qk_rope_head_dim);
    if (a.q_lora_rank) {
      g.push_back({"self_attn.q_a_proj", h, a.q_lora_rank, L});
      g.push_back({"self_attn.q_b_proj", a.q_lora_rank, mul(a.heads, qhd), L});
    } else {
      g.push_back({"self_attn.q_proj", h, mul(a.heads, qhd), L});
    }
    g.push_back({"self_attn.kv_a_proj_with_mqa", h, add(a.kv_lora_rank, a.qk_rope_head_dim), L});
    g.push_back(
        {"self_attn.kv_b_proj", a.kv_lora_rank, mul(a.heads, add(a.qk_nope_head_dim, a.v_head_dim)), L});
    g.push_back({"self_attn.o_proj", mul(a.heads, a.v_head_dim), h, L});
  } else if (l.fused_qkv) {
    g.push_back({"self_attn.qkv_proj", h, add(q, mul(2, kv)), L});
    g.push_back({"self_attn.o_proj", q, h, L});
  } else {
    g.push_back({"self_attn.q_proj", h, q, L});
    g.push_back({"self_attn.k_proj", h, kv, L});
    g.push_back({"self_attn.v_proj", h, kv, L});
    g.push_back({"self_attn.o_proj", q, h, L});
  }
  for (LinearGroup& x : g) x.layers = x.span = L;  // attention: one of each per layer
  // MLPs: dense layers, then per MoE layer the routed experts and the shared experts (routers are
  // not quantised by these methods and stay with the model's other weights). With dense and MoE
  // layers mixed, memplan knows how many layers hold each but not their indices.
  auto mlps = [&](const std::string& prefix, uint64_t width, uint64_t count, uint64_t layers) {
    if (count == 0 || width == 0) return;
    const size_t first = g.size();
    if (a.gated_mlp && l.fused_gate_up) {
      g.push_back({prefix + "gate_up_proj", h, mul(2, width), count});
    } else if (a.gated_mlp) {
      g.push_back({prefix + "gate_proj", h, width, count});
      g.push_back({prefix + "up_proj", h, width, count});
    } else {
      g.push_back({prefix + "up_proj", h, width, count});
    }
    g.push_back({prefix + "down_proj", width, h, count});
    for (size_t i = first; i < g.size(); ++i) {
      g[i].layers = layers;
      g[i].placed = layers == L;
      g[i].span = L;
    }
  };
  if (!a.experts) {
    mlps("mlp.", I, L, L);
  } else {
    mlps("mlp.", a.dense_intermediate ? a.dense_intermediate : I, a.dense_layers, a.dense_layers);
    mlps("mlp.experts.", a.expert_intermediate ? a.expert_intermediate : I, mul(a.moe_layers(), a.experts),
         a.moe_layers());
    mlps("mlp.shared_experts.", a.shared_intermediate, a.moe_layers(), a.moe_layers());
  }
  if (l.head && a.vocab) g.push_back({"lm_head", h, a.vocab, 1});
  return g;
}

std::optional<QuantizedWeights> read_quantization_config(const nlohmann::json& config,
                                                         const std::string& file,
                                                         const std::vector<LinearGroup>& groups,
                                                         uint64_t total_parameters,
                                                         const std::string& torch_format) {
  auto it = config.find("quantization_config");
  if (it == config.end() || it->is_null()) return std::nullopt;
  if (!it->is_object()) throw Error(file + ": quantization_config", json_brief(*it) + " is not an object");
  QuantReader q(*it, file);
  QuantizedWeights w;
  w.method = q.text("quant_method").value_or("");
  if (w.method.empty() && (q.find("load_in_4bit") || q.find("load_in_8bit"))) w.method = "bitsandbytes";
  w.other_format = torch_format.empty() ? "fp16" : torch_format;
  if (torch_format.empty()) w.notes.push_back("no torch_dtype: the unquantised tensors counted in fp16");
  const ElementCost other = find_storage_format("torch_dtype", w.other_format).cost;
  if (other.den != 1)
    throw Error(file + ": torch_dtype", "\"" + w.other_format + "\" is not a whole-byte format");

  Scheme s;
  if (w.method == "gptq")
    s = gptq(q, groups, w.notes);
  else if (w.method == "awq")
    s = awq(q, groups, w.notes);
  else if (w.method == "bitsandbytes")
    s = bitsandbytes(q, w.other_format, w.notes);
  else if (w.method == "fp8")
    s = fp8(q, groups, w.notes);
  else if (w.method == "mxfp4")
    s = mxfp4(q, groups, w.notes);
  else if (w.method == "compressed-tensors")
    s = compressed_tensors(q, w.other_format, other.num, w.notes);
  else
    q.fail("quant_method",
           "\"" + printable(w.method, 60) +
               "\" is not a method memplan counts (expected gptq, awq, bitsandbytes, fp8, mxfp4 or "
               "compressed-tensors)");
  w.format = s.format;

  // Each group layer by layer: a module list may keep some layers unquantised (unsloth's dynamic
  // 4-bit checkpoints list "model.layers.N.mlp" per layer; compressed-tensors lists names).
  uint64_t matrices = 0;
  for (const LinearGroup& g : groups) {
    uint64_t n = 0;
    if (g.layers == 0) {
      n = s.quantized(g, module_name(g, 0)) ? g.count : 0;
    } else if (g.placed) {
      const uint64_t per_layer = g.count / g.layers;
      for (uint64_t i = 0; i < g.layers; ++i)
        if (s.quantized(g, module_name(g, i))) n = add(n, per_layer);
    } else {
      uint64_t yes = 0;
      for (uint64_t i = 0; i < g.span; ++i) yes += s.quantized(g, module_name(g, i)) ? 1 : 0;
      if (yes != 0 && yes != g.span)
        throw Error(file + ": quantization_config",
                    "a module list keeps some layers of " + g.name +
                        " unquantised, but memplan does not know which layer indices hold dense and "
                        "which hold expert MLPs in this model");
      n = yes ? g.count : 0;
    }
    if (n == 0) continue;
    w.quantized_parameters = add(w.quantized_parameters, mul(mul(g.in, g.out), n));
    w.packed_bytes = add(w.packed_bytes, mul(s.bytes(g.in, g.out), n));
    matrices = add(matrices, n);
  }
  if (w.quantized_parameters > total_parameters)
    throw Error(file + ": quantization_config", "quantised matrices exceed the model's parameters");
  w.other_bytes = mul(total_parameters - w.quantized_parameters, other.num);
  w.bytes = add(w.packed_bytes, w.other_bytes);
  w.notes.push_back(to_s(matrices) + " matrices (" + group_thousands(w.quantized_parameters) +
                    " weights) stored as " + w.format + " in " + group_thousands(w.packed_bytes) +
                    " B; the other " + group_thousands(total_parameters - w.quantized_parameters) +
                    " parameters in " + w.other_format + " (" + group_thousands(w.other_bytes) + " B)");
  w.notes.push_back(
      "these bytes are the checkpoint's tensors counted one by one (what model.safetensors.index.json "
      "calls total_size); the flat storage formats gptq-4bit / awq-4bit / nf4 apply one rate to every "
      "weight and are approximate");
  return w;
}

}  // namespace memplan::detail
