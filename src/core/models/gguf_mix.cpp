// The tensors of a llama.cpp GGUF for an architecture, typed as llama-quantize types them.
#include "core/models/gguf_mix.hpp"

#include <memplan/error.hpp>
#include <memplan/quantity.hpp>
#include "core/base/checked.hpp"
#include "core/models/gguf_tensors.hpp"

namespace memplan {

int64_t gguf_tensor_layer(const std::string& name) {
  if (name.rfind("blk.", 0) != 0) return -1;
  int64_t layer = 0;
  size_t i = 4;
  if (i >= name.size() || name[i] < '0' || name[i] > '9') return -1;
  for (; i < name.size() && name[i] >= '0' && name[i] <= '9'; ++i) layer = layer * 10 + (name[i] - '0');
  return layer;
}

TensorRole gguf_tensor_role(const std::string& name) {
  // The order of llama.cpp's tensor_get_category: the first match wins.
  if (name == "output.weight") return TensorRole::output;
  if (name == "token_embd.weight" || name == "per_layer_token_embd.weight") return TensorRole::token_embd;
  const auto has = [&](const char* s) { return name.find(s) != std::string::npos; };
  if (has("attn_qkv.weight") || has("attn_kv_b.weight")) return TensorRole::attn_qkv;
  if (has("attn_v.weight")) return TensorRole::attn_v;
  if (has("attn_k.weight")) return TensorRole::attn_k;
  if (has("attn_q.weight")) return TensorRole::attn_q;
  if (has("attn_output.weight")) return TensorRole::attn_output;
  if (has("ffn_up")) return TensorRole::ffn_up;
  if (has("ffn_gate")) return TensorRole::ffn_gate;
  if (has("ffn_down")) return TensorRole::ffn_down;
  return TensorRole::other;
}

namespace {

const GgufType& type_named(const std::string& name) {
  for (const GgufType& t : gguf_types())
    if (name == t.name) return t;
  throw Error("GGUF", "unknown ggml type " + name);
}

// Whether llama-quantize quantises the tensor (tensor_allows_quantization, for these names).
bool quantisable(const GgufTensor& t) {
  const std::string& n = t.name;
  if (t.dims.size() < 2) return false;
  if (n.size() < 6 || n.compare(n.size() - 6, 6, "weight") != 0) return false;
  return n.find("_norm.weight") == std::string::npos && n.find("ffn_gate_inp.weight") == std::string::npos;
}

}  // namespace

GgufFile gguf_of_arch(const TransformerArch& a, const LlamaFtype& f, bool imatrix) {
  GgufFile g = gguf_tensors_of_arch(a, f.name);  // the converter's tensors, then llama-quantize's types
  g.file = a.model_type + " as " + f.name;
  const uint64_t heads = a.heads, kv = a.resolved_kv_heads();
  QuantModelFacts m;
  m.layers = a.layers;
  m.gqa = heads / kv;
  m.experts = a.experts;
  m.falcon = a.model_type == "falcon";
  m.size_70b = a.model_type == "llama" && a.layers == 80;
  m.tied_embeddings = a.tied_embeddings;
  m.imatrix = imatrix;
  const GgufType& base = type_named(f.default_type);
  for (GgufTensor& t : g.tensors) {
    if (quantisable(t)) {
      const TensorRole role = gguf_tensor_role(t.name);
      const int64_t layer = gguf_tensor_layer(t.name);
      std::string type;
      if (std::string(f.name) == "mxfp4_moe" && t.dims.size() == 3)
        type = "MXFP4";
      else if ((role == TensorRole::output || (a.tied_embeddings && role == TensorRole::token_embd)) &&
               t.dims[0] % base.block != 0)
        type = "Q8_0";  // a row that does not fill the mix's blocks
      else
        type = llama_tensor_type(f, m, role, layer < 0 ? 0 : static_cast<uint64_t>(layer));
      if (t.dims[0] % type_named(type).block != 0) {
        type = llama_fallback_type(type);
        if (t.dims[0] % type_named(type).block != 0) type = "F16";
      }
      t.type = type_named(type).id;
    }
    const GgufType& ty = *find_gguf_type(t.type);
    t.bytes = checked_mul_ratio(t.elements, ty.type_size, ty.block, "GGUF bytes");
  }
  uint64_t offset = 0;
  for (GgufTensor& t : g.tensors) {
    t.offset = offset;
    offset = checked_add(offset, t.bytes, "GGUF bytes");
  }
  g.data_end = offset;
  g.metadata["general.architecture"] = a.model_type;
  g.metadata["general.file_type"] = f.id;
  return g;
}

void use_llama_ftype(EstimateRequest& r, uint32_t id) {
  const LlamaFtype* f = llama_ftype(id);
  if (!f) throw Error(Field::quantize, "llama.cpp file type " + std::to_string(id) + " is not known");
  if (r.mode != Mode::infer)
    throw Error(Field::quantize, std::string("\"") + f->name +
                                     "\" is a llama.cpp file type, for inference (" + field_ref(Field::mode) +
                                     " infer); for training use nf4, int8 or int4");
  if (!r.model.arch)
    throw Error(Field::quantize, std::string("\"") + f->name + "\" needs the model's architecture (" +
                                     field_ref(Field::model) + " or " + field_ref(Field::config) + ")");
  const GgufFile g = gguf_of_arch(*r.model.arch, *f);
  r.llama_ftype = id;
  r.model.weight_bytes = g.data_end;
  r.model.weight_format = f->name;
  r.stored_weights = true;
  std::string mix;
  for (const GgufTypeTotal& t : gguf_type_totals(g))
    mix += (mix.empty() ? "" : ", ") + std::to_string(t.tensors) + " " + t.type;
  r.model.notes.push_back(std::string("weights as llama-quantize writes ") + f->name + ": " + mix +
                          " tensors = " + group_thousands(g.data_end) + " bytes");
}

}  // namespace memplan
