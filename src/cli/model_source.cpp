#include "cli/model_source.hpp"

#include <sstream>

#include <memplan/error.hpp>
#include <memplan/probe.hpp>
#include <memplan/quantity.hpp>
#include "core/models/arch_layout.hpp"
#include "core/models/gguf.hpp"
#include "core/models/hf_config.hpp"
#include "core/models/parameter_count.hpp"
#include "core/models/safetensors.hpp"

namespace memplan::cli {
namespace {

using Values = std::map<std::string, std::string>;

const std::string* get(const Values& v, const char* key) {
  auto it = v.find(key);
  return it == v.end() ? nullptr : &it->second;
}

// A hard limit far above any real model (the largest published are ~2T) that keeps every
// byte count well inside 64 bits.
constexpr uint64_t k_max_parameters = 1000000000000000ull;  // 1e15

std::vector<uint64_t> parse_widths(const std::string& text) {
  std::vector<uint64_t> widths;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) widths.push_back(parse_count("--mlp", item, 1ull << 32));
  if (widths.size() < 2)
    throw Error("--mlp", "\"" + text + "\" needs at least two widths (expected e.g. 784,512,256,10)");
  for (uint64_t w : widths)
    if (w == 0) throw Error("--mlp", "\"" + text + "\" has a zero width");
  return widths;
}

// Architecture flags override or define the transformer.
void apply_arch_flags(const Values& v, ModelSpec& m) {
  const char* keys[] = {"layers", "hidden", "heads", "kv_heads", "intermediate", "vocab"};
  bool any = false;
  for (const char* k : keys) any = any || get(v, k);
  if (!any) return;
  TransformerArch a = m.arch.value_or(TransformerArch{});
  auto take = [&](const char* key, const char* flag, uint64_t& field) {
    if (const std::string* s = get(v, key)) {
      field = parse_count(flag, *s, 1ull << 32);
      if (field == 0) throw Error(flag, "\"" + *s + "\" must be at least 1");
    }
  };
  take("layers", "--layers", a.layers);
  take("hidden", "--hidden", a.hidden);
  take("heads", "--heads", a.heads);
  take("kv_heads", "--kv-heads", a.kv_heads);
  take("intermediate", "--intermediate", a.intermediate);
  take("vocab", "--vocab", a.vocab);
  if (!a.layers || !a.hidden || !a.heads)
    throw Error("--layers", "an architecture needs at least --layers, --hidden and --heads");
  if (a.hidden % a.heads)
    throw Error("--heads", std::to_string(a.heads) + " does not divide --hidden " + std::to_string(a.hidden));
  if (a.kv_heads && a.heads % a.kv_heads)
    throw Error("--kv-heads",
                std::to_string(a.kv_heads) + " does not divide --heads " + std::to_string(a.heads));
  if (!a.intermediate) a.intermediate = 4 * a.hidden;
  if (const std::string* f = get(v, "family")) {
    if (*f != "gpt2" && *f != "llama" && *f != "bert")
      throw Error("--family", "\"" + *f + "\" is not a family (expected gpt2, llama or bert)");
    a.model_type = *f;
    const bool llama = *f == "llama";
    a.causal = *f != "bert";
    a.gated_mlp = llama;
    a.activation = llama ? "silu" : "gelu";
    a.norm = llama ? "rmsnorm" : "layernorm";
    a.tied_embeddings = *f == "gpt2";
    a.max_positions = *f == "llama" ? 0 : (a.max_positions ? a.max_positions : 1024);
  } else if (a.model_type.empty()) {
    a.model_type = "gpt2";  // the plainest decoder: LayerNorm, GELU MLP, learned positions
    a.norm = "layernorm";
  }
  if (get(v, "hidden") || get(v, "heads"))
    a.head_dim = 0;  // hidden / heads again, unless the preset's stands
  m.arch = a;
}

}  // namespace

ModelSpec resolve_model_source(const Values& v, const Presets& presets) {
  const char* sources[] = {"params", "model", "config", "safetensors", "gguf", "mlp"};
  std::vector<std::string> given;
  for (const char* s : sources)
    if (get(v, s)) given.push_back(s);
  if (given.size() > 1)
    throw Error("--" + given[0], "cannot be combined with --" + given[1] + " (give one model source)");

  ModelSpec m;
  const bool arch_flags = get(v, "layers") || get(v, "hidden") || get(v, "heads");
  if (given.empty() && !arch_flags)
    throw Error("--params",
                "no model given (expected --params N, --model NAME, --config FILE, --safetensors PATH, "
                "--gguf FILE, --mlp WIDTHS or --layers/--hidden/--heads)");
  const std::string source = given.empty() ? "" : given[0];
  if (source == "params") {
    m.id = "custom";
    m.parameters = parse_count("--params", *get(v, "params"), k_max_parameters);
    if (m.parameters == 0) throw Error("--params", "\"" + *get(v, "params") + "\" must be at least 1");
    m.name = "custom model";
    m.source = "--params";
  } else if (source == "model") {
    const ModelPreset& p = find_model(presets, "--model", *get(v, "model"));
    m = p.model;
  } else if (source == "mlp") {
    m.mlp_widths = parse_widths(*get(v, "mlp"));
    const MlpParameters p = count_mlp_parameters(m.mlp_widths);
    m.id = "mlp";
    m.parameters = p.parameters;
    m.tensors = p.tensors;
    m.name = "MLP " + *get(v, "mlp");
    m.source = "--mlp: sum of in x out weights + out biases per Linear layer";
  } else if (source == "config") {
    m = read_hf_config(*get(v, "config"));
  } else if (source == "safetensors") {
    m = read_safetensors(*get(v, "safetensors"));
  } else if (source == "gguf") {
    m = read_gguf(*get(v, "gguf"));
  }
  apply_arch_flags(v, m);
  if (m.parameters == 0 && m.arch) {  // an architecture from flags alone: count its blocks
    TransformerArch a = *m.arch;
    apply_layout_defaults(a);
    if (!a.vocab) throw Error("--vocab", "an architecture from flags needs --vocab (or --params N)");
    const ParameterCount b = count_parameters(a);
    m.id = "custom";
    m.name = a.model_type + "-style transformer, " + std::to_string(a.layers) + " layers x " +
             std::to_string(a.hidden);
    m.parameters = b.total;
    m.tensors = b.tensors;
    m.source = "counted from the architecture flags (" + a.model_type + " block layout)";
  }
  if (const std::string* t = get(v, "tensors")) {
    m.tensors = parse_count("--tensors", *t, 1ull << 32);
    if (m.tensors == 0) throw Error("--tensors", "\"" + *t + "\" must be at least 1");
  }
  return m;
}

void resolve_local_gpu(const std::string& name, GpuTargets& targets) {
  const ProbeReport report = probe_devices(ProbeOptions::from_environment());
  const LocalDevice local = choose_local_device(report, name);
  if (!local.device) {
    targets.device_notes.push_back(local.reason);
    return;
  }
  const ProbedDevice& d = *local.device;
  GpuSpec g;
  g.id = "cuda:" + std::to_string(d.index);
  g.name = device_label(d);
  g.vendor = "nvidia";
  g.memory_total_bytes = d.total_bytes;
  g.memory_reserved_bytes = d.reserved_bytes;
  g.reserved_known = d.reserved_known;
  g.free_bytes = device_memory_bytes(d, MemoryBasis::free);
  if (d.cc_major >= 0) g.compute_capability = std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor);
  g.bf16 = d.bf16;
  g.fp8 = d.fp8;
  g.is_device = true;
  g.source = "NVML" + (report.driver_version.empty() ? std::string() : ", driver " + report.driver_version);
  if (!d.reserved_known) g.notes = "reserved share unknown (NVML v1 memory call): usable = total";
  targets.gpus.push_back(g);
}

}  // namespace memplan::cli
