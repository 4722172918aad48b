#include "cli/model_source.hpp"

#include <memory>
#include <utility>
#include <vector>

#include <memplan/error.hpp>
#include <memplan/model_files.hpp>
#include <memplan/probe.hpp>
#include <memplan/quantity.hpp>
#include "core/base/file_reader.hpp"
#include "core/models/arch_layout.hpp"
#include "core/models/gguf.hpp"
#include "core/models/hf_cache.hpp"
#include "core/models/hf_config.hpp"
#include "core/models/parameter_count.hpp"
#include "core/models/safetensors.hpp"
#ifdef MEMPLAN_HAVE_NET
#include "net/hub_download.hpp"
#endif

namespace memplan::cli {
namespace {

// Architecture flags override or define the transformer.
void apply_arch_flags(const PlanValues& v, ModelSpec& m) {
  if (!v.layers && !v.hidden && !v.heads && !v.kv_heads && !v.intermediate && !v.vocab) return;
  TransformerArch a = m.arch.value_or(TransformerArch{});
  a.layers = v.layers.value_or(a.layers);
  a.hidden = v.hidden.value_or(a.hidden);
  a.heads = v.heads.value_or(a.heads);
  a.kv_heads = v.kv_heads.value_or(a.kv_heads);
  a.intermediate = v.intermediate.value_or(a.intermediate);
  a.vocab = v.vocab.value_or(a.vocab);
  if (!a.layers || !a.hidden || !a.heads)
    throw Error(Field::layers, "an architecture needs at least --layers, --hidden and --heads");
  if (a.hidden % a.heads)
    throw Error(Field::heads,
                std::to_string(a.heads) + " does not divide --hidden " + std::to_string(a.hidden));
  if (a.kv_heads && a.heads % a.kv_heads)
    throw Error(Field::kv_heads,
                std::to_string(a.kv_heads) + " does not divide --heads " + std::to_string(a.heads));
  if (!a.intermediate) a.intermediate = 4 * a.hidden;
  if (v.family) {
    const std::string& f = *v.family;
    a.model_type = f;
    const bool llama = f == "llama";
    a.causal = f != "bert";
    a.gated_mlp = llama;
    a.activation = llama ? "silu" : "gelu";
    a.norm = llama ? "rmsnorm" : "layernorm";
    a.tied_embeddings = f == "gpt2";
    a.max_positions = llama ? 0 : (a.max_positions ? a.max_positions : 1024);
  } else if (a.model_type.empty()) {
    a.model_type = "gpt2";  // the plainest decoder: LayerNorm, GELU MLP, learned positions
    a.norm = "layernorm";
  }
  if (v.hidden || v.heads) a.head_dim = 0;  // hidden / heads again, unless the preset's stands
  m.arch = a;
}

}  // namespace

std::string resolve_hub_snapshot(const HubModelId& id, const std::string& subject, bool offline) {
  const std::string cache = hub_cache_dir(HubCacheEnv::from_environment());
  if (std::optional<std::string> snapshot = find_cached_snapshot(cache, id)) return *snapshot;
  const std::string name = "\"" + id.repo() + (id.revision == "main" ? "" : "@" + id.revision) + "\"";
#ifdef MEMPLAN_HAVE_NET
  const net::HubSettings hub = net::HubSettings::from_environment();
  if (std::optional<std::string> snapshot = find_cached_snapshot(hub.cache_dir, id)) return *snapshot;
  if (!offline && !net::hub_offline_from_environment()) {
    const std::unique_ptr<net::HttpClient> http = net::make_curl_client();
    return net::download_model_headers(*http, hub, id);
  }
  throw Error(subject, name + " is not in the Hugging Face cache (" +
                           join_path(cache, "models--" + id.org + "--" + id.name) + ") nor memplan's (" +
                           hub.cache_dir + "), and " + (offline ? "--offline" : "HF_HUB_OFFLINE") +
                           " forbids the network");
#else
  (void)offline;
  throw Error(subject, name + " is not in the Hugging Face cache (" +
                           join_path(cache, "models--" + id.org + "--" + id.name) +
                           "), and this memplan was built without the network (MEMPLAN_NET=OFF)");
#endif
}

ModelSpec resolve_model_source(const PlanValues& v, const Presets& presets, bool offline) {
  const std::pair<Field, bool> sources[] = {
      {Field::params, v.params.has_value()}, {Field::model, v.model.has_value()},
      {Field::config, v.config.has_value()}, {Field::safetensors, v.safetensors.has_value()},
      {Field::gguf, v.gguf.has_value()},     {Field::mlp, v.mlp.has_value()}};
  std::vector<Field> given;
  for (const auto& [field, present] : sources)
    if (present) given.push_back(field);
  if (given.size() > 1)
    throw Error(given[0], "cannot be combined with " + flag_for(given[1]) + " (give one model source)");

  ModelSpec m;
  const bool arch_flags = v.layers || v.hidden || v.heads;
  if (given.empty() && !arch_flags)
    throw Error(Field::params,
                "no model given (expected --params N, --model NAME, --config FILE, --safetensors PATH, "
                "--gguf FILE, --mlp WIDTHS or --layers/--hidden/--heads)");
  if (v.params) {
    m.id = "custom";
    m.parameters = *v.params;
    m.name = "custom model";
    m.source = "--params";
  } else if (v.model) {
    const std::optional<HubModelId> hub = parse_hub_model_id(*v.model);
    if (hub) {  // no preset id holds a '/': "org/name[@revision]" is a Hugging Face model id
      const std::string snapshot = resolve_hub_snapshot(*hub, flag_for(Field::model), offline);
      m = inspect_model_files(snapshot).model;
      m.id = hub->repo();
      m.source = "Hugging Face cache, " + snapshot + ": " + m.source;
    } else {
      m = find_model(presets, flag_for(Field::model), *v.model).model;
    }
  } else if (v.mlp) {
    m.mlp_widths = *v.mlp;
    const MlpParameters p = count_mlp_parameters(m.mlp_widths);
    m.id = "mlp";
    m.parameters = p.parameters;
    m.tensors = p.tensors;
    m.name = "MLP " + *v.mlp_text;
    m.source = "--mlp: sum of in x out weights + out biases per Linear layer";
  } else if (v.config) {
    ModelReadOptions read;
    read.assume_llama = v.assume_llama;
    m = read_hf_config(*v.config, read);
  } else if (v.safetensors) {
    m = read_safetensors(*v.safetensors);
  } else if (v.gguf) {
    m = read_gguf(*v.gguf);
  }
  apply_arch_flags(v, m);
  if (m.parameters == 0 && m.arch) {  // an architecture from flags alone: count its blocks
    TransformerArch a = *m.arch;
    apply_layout_defaults(a);
    if (!a.vocab) throw Error(Field::vocab, "an architecture from flags needs --vocab (or --params N)");
    const ParameterCount b = count_parameters(a);
    m.id = "custom";
    m.name = a.model_type + "-style transformer, " + std::to_string(a.layers) + " layers x " +
             std::to_string(a.hidden);
    m.parameters = b.total;
    m.tensors = b.tensors;
    m.source = "counted from the architecture flags (" + a.model_type + " block layout)";
  }
  if (v.tensors) m.tensors = *v.tensors;
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
