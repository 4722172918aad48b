// gguf-fit's rendering of a plan: the table, --explain and JSON (see gguf_fit_common.hpp).
#include "cli/gguf_fit_common.hpp"

#include <algorithm>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/render_cuda_context.hpp"
#include "cli/text_table.hpp"
#include "core/serving/llamacpp_failure.hpp"

namespace memplan::cli::gguf_fit {
namespace {

nlohmann::json ollama_json(const Built& b, const OllamaPlacement& o) {
  return {{"version", b.ollama_version.text},
          {"rule", ollama_rule_source(ollama_rule(b.ollama_version))},
          {"num_gpu", o.layers},
          {"model_layers", o.model_layers},
          {"split", o.split},
          {"allocations_bytes", o.allocations},
          {"graph_family", o.graph.family},
          {"graph_full_bytes", o.graph.full_offload},
          {"graph_partial_bytes", o.graph.partial_offload},
          {"kv_bytes", o.graph.kv_total},
          {"layer_buffer_bytes", o.layer_buffer},
          {"output_layer_bytes", o.output_bytes}};
}

// --explain: what the host's layers and the pipeline add to the GPUs' compute buffers.
void explain_host_work(const LlamaCppRequest& q, const LlamaCppPlan& p, uint64_t T, Io& io) {
  if (p.gpus.empty()) return;
  io.out << "  -ngl order: "
         << (q.output_first
                 ? "output-first (llama.cpp PR 18148 on: the output layer, then the last layers)"
                 : "layers-first (builds before llama.cpp PR 18148: the last layers, the output at "
                   "layers + 1)")
         << "\n";
  if (!q.op_offload || T < 32) {
    if (p.host.layers || !p.gpus.back().output)
      io.out << "  host layers: computed on the CPU ("
             << (q.op_offload ? "fewer than 32 tokens per evaluation" : "--no-op-offload") << ")\n";
  }
  if (p.compute_host_attention)
    io.out << "  compute, host layer on GPU 0 (op offload from 32 tokens): attention stage + its K and V "
              "copied in = "
           << mib(p.compute_host_attention) << "\n";
  if (p.compute_host_weight)
    io.out << "  compute, host weight on GPU 0: the largest host tensor copied in, one per split, + its "
              "product's activations = "
           << mib(p.compute_host_weight) << "\n";
  if (p.compute_host_output)
    io.out << "  compute, output layer on the CPU: its product runs on GPU 0 with the output matrix copied "
              "in: output stage + matrix = "
           << mib(p.compute_host_output) << "\n";
  if (p.pipeline_copies > 1)
    io.out << "  pipeline parallelism (" << p.gpus.size()
           << " GPUs, every layer offloaded): " << p.pipeline_copies
           << " copies of each split input kept: + 3 masks and 4 hidden states = "
           << mib(p.compute_pipeline_extra) << " on each GPU with layers\n";
}

const char* stage_name(LlamaCppStage s) {
  switch (s) {
    case LlamaCppStage::model:
      return "model";
    case LlamaCppStage::kv:
      return "KV cache";
    case LlamaCppStage::compute:
      return "compute";
    case LlamaCppStage::projector:
      return "projector";
  }
  return "";
}

// The first allocation llama.cpp would fail, with its log lines (CUDA and ROCm builds).
std::optional<LlamaCppFailure> start_failure(const Built& b, const LlamaCppPlan& p) {
  if (p.fits || b.gpus.empty()) return std::nullopt;
  return llamacpp_start_failure(b.request, p, device_prefix(b.gpus[0]));
}

}  // namespace

int render(const Built& b, const LlamaCppPlan& p, const OutputOptions& out, Io& io) {
  const LlamaCppRequest& q = b.request;
  if (out.format == Format::json) {
    nlohmann::json gpus = nlohmann::json::array();
    for (size_t i = 0; i < p.gpus.size(); ++i) {
      const LlamaCppDevice& d = p.gpus[i];
      gpus.push_back({{"gpu", b.gpus[i].id},
                      {"memory_bytes", q.gpu_bytes[i]},
                      {"layers", d.layers},
                      {"output_layer", d.output},
                      {"model_bytes", d.model},
                      {"kv_bytes", d.kv},
                      {"compute_bytes", d.compute},
                      {"projector_bytes", d.projector},
                      {"reserve_bytes", d.reserve},
                      {"total_bytes", d.total()},
                      {"fits", static_cast<bool>(p.gpu_fits[i])}});
    }
    nlohmann::json doc = {
        {"schema", "memplan.gguf-fit/1"},
        {"n_gpu_layers", p.n_gpu_layers},
        {"layers", p.n_layers},
        {"n_ctx", q.n_ctx},
        {"kv_cells", p.n_ctx_cells},
        {"n_ubatch", q.n_ubatch},
        {"cache_type_k", cache_lower(q.cache_k)},
        {"cache_type_v", cache_lower(q.cache_v)},
        {"flash_attn", q.flash_attn},
        {"layer_bytes", p.layer_bytes},
        {"token_embd_bytes", p.token_embd_bytes},
        {"output_bytes", p.output_bytes},
        {"kv_layer_bytes", p.kv_layer_bytes},
        {"kv_swa_cells", p.n_swa_cells},
        {"kv_swa_layer_bytes", p.kv_swa_layer_bytes},
        {"compute_attention_bytes", p.compute_attention},
        {"compute_output_bytes", p.compute_output},
        {"op_offload", q.op_offload},
        {"n_seq", q.n_seq},
        {"n_outputs", q.n_outputs},
        {"kv_unified", q.kv_unified},
        {"ngl_order", q.output_first ? "output-first" : "layers-first"},
        {"compute_host_attention_bytes", p.compute_host_attention},
        {"compute_host_weight_bytes", p.compute_host_weight},
        {"compute_host_output_bytes", p.compute_host_output},
        {"pipeline_copies", p.pipeline_copies},
        {"pipeline_retried", p.pipeline_retried},
        {"compute_pipeline_extra_bytes", p.compute_pipeline_extra},
        {"gpus", gpus},
        {"host", {{"model_bytes", p.host.model}, {"kv_bytes", p.host.kv}, {"layers", p.host.layers}}},
        {"fits", p.fits},
        {"llama_cpp", flags_of(q, p, b.model_arg)},
        {"ollama", ollama_json(b, ollama_placement(b))}};
    if (b.fit)
      doc["fit"] = {{"steps", b.fit->steps},
                    {"failure", b.fit->failure},
                    {"changed", b.fit->changed},
                    {"n_ctx", b.request.n_ctx},
                    {"n_cpu_moe", b.request.n_cpu_moe}};
    if (const auto f = start_failure(b, p))
      doc["start_failure"] = {{"stage", stage_name(f->stage)},
                              {"gpu", device_name(b.gpus[f->gpu], f->gpu)},
                              {"bytes", f->bytes},
                              {"free_bytes", f->free},
                              {"log", f->lines}};
    io.out << doc.dump(2) << "\n";
    return p.fits ? k_ok : k_no_fit;
  }
  using A = TextTable::Align;
  TextTable t({{"device", A::left},
               {"layers", A::right},
               {"model", A::right},
               {"KV cache", A::right},
               {"compute", A::right},
               {"other", A::right},
               {"total", A::right},
               {"of", A::right},
               {"fits", A::left}});
  for (size_t i = 0; i < p.gpus.size(); ++i) {
    const LlamaCppDevice& d = p.gpus[i];
    t.add_row({device_name(b.gpus[i], i) + " (" + b.gpus[i].id + ")",
               std::to_string(d.layers) + (d.output ? "+out" : ""), mib(d.model), mib(d.kv), mib(d.compute),
               mib(d.projector + d.reserve), mib(d.total()), mib(q.gpu_bytes[i]),
               p.gpu_fits[i] ? "yes" : "no"});
  }
  t.add_row({"CPU (host RAM)", std::to_string(p.host.layers) + (p.host.output ? "+out" : ""),
             mib(p.host.model), mib(p.host.kv), "-", "-", mib(p.host.model + p.host.kv), "-", "-"});
  io.out << (out.format == Format::markdown ? t.render_markdown() : t.render());
  if (out.quiet) return p.fits ? k_ok : k_no_fit;
  io.out << "\n  -ngl " << p.n_gpu_layers << " of " << p.n_layers + 1 << " (" << p.n_layers
         << " repeating layers + the output layer)" << (q.n_gpu_layers ? "" : ": the largest that fits")
         << "\n";
  const OllamaPlacement o = ollama_placement(b);
  io.out << "  " << flags_of(q, p, b.model_arg) << "\n  " << ollama_of(q, o, b.ollama_version) << "\n";
  if (b.fit) {
    io.out << "  llama.cpp --fit (llama_params_fit):\n";
    for (const std::string& st : b.fit->steps) io.out << "    " << st << "\n";
  }
  if (p.pipeline_retried)
    io.out << "  pipeline parallelism's 4 copies do not fit: llama.cpp reserves again with one (\"compute "
              "buffer allocation failed, retrying without pipeline parallelism\")\n";
  if (const auto f = start_failure(b, p)) {
    io.out << "  llama.cpp stops at the " << stage_name(f->stage) << " buffer of "
           << device_name(b.gpus[f->gpu], f->gpu) << " (" << mib(f->bytes) << ", " << mib(f->free)
           << " left):\n";
    for (const std::string& l : f->lines) io.out << "    " << l << "\n";
  }
  if (out.explain) {
    io.out << "\n  KV cache per layer: " << p.n_ctx_cells << " cells (n_ctx " << q.n_ctx
           << " padded to 256) x ";
    if (q.arch.mla())
      io.out << q.arch.kv_lora_rank + q.arch.qk_rope_head_dim << " (kv_lora_rank + qk_rope_head_dim) in "
             << cache_lower(q.cache_k) << ", no V row (MLA)";
    else
      io.out << q.arch.resolved_kv_heads() * q.arch.resolved_head_dim() << " (kv_heads x head_dim) in "
             << cache_lower(q.cache_k) << " + " << cache_lower(q.cache_v);
    io.out << " = " << mib(p.kv_layer_bytes) << "\n";
    if (p.n_swa_cells) {
      uint64_t window = 0;
      for (bool w : p.swa_layers) window += w;
      io.out << "  window layers (" << window << " of " << p.n_layers << "): " << p.n_swa_cells << " cells ("
             << (q.swa_full ? "--swa-full: n_ctx"
                            : "min(n_ctx, window " + std::to_string(q.arch.attention_window) +
                                  " + n_ubatch " + std::to_string(q.n_ubatch) + ")")
             << " padded to 256) = " << mib(p.kv_swa_layer_bytes) << " each\n";
    }
    const uint64_t T = std::min(q.n_ctx, q.n_ubatch);
    if (q.flash_attn)
      io.out << "  compute, attention: f16 mask " << p.n_ctx_cells << " x pad64(" << T << ") x 2 + 3 x "
             << q.arch.hidden << " x " << T << " x 4 = " << mib(p.compute_attention) << "\n";
    else
      io.out << "  compute, attention: scores " << p.n_ctx_cells << " x " << T << " x " << q.arch.heads
             << " heads x 4 + f32 mask " << p.n_ctx_cells << " x pad64(" << T << ") x 4 + 2 x "
             << q.arch.hidden << " x " << T << " x 4 = " << mib(p.compute_attention) << "\n";
    io.out << "  compute, output: logits " << q.arch.vocab << " x " << T << " x 4 + " << q.arch.hidden
           << " x " << T << " x 4 = " << mib(p.compute_output) << " (on the GPU with the output layer)\n";
    explain_host_work(q, p, T, io);
    io.out << "  model: token_embd " << mib(p.token_embd_bytes) << " stays on the CPU; output layer "
           << mib(p.output_bytes) << "; repeating layer 0 "
           << mib(p.layer_bytes.empty() ? 0 : p.layer_bytes[0]) << "\n";
    io.out << "  ollama " << b.ollama_version.text << " ("
           << ollama_rule_source(ollama_rule(b.ollama_version)) << "): its own estimate, " << o.graph.family
           << " graph: full offload " << mib(o.graph.full_offload) << ", partial "
           << mib(o.graph.partial_offload) << " (counted: " << mib(o.graph_used) << "); KV "
           << mib(o.graph.kv_total) << "; one-layer buffer " << mib(o.layer_buffer) << "; output layer "
           << mib(o.output_bytes) << "; per GPU: minimum "
           << (!b.gpus.empty() && gpu_runtime(b.gpus[0]) == GpuRuntime::metal ? "512" : "457")
           << " MiB + OLLAMA_GPU_OVERHEAD " << mib(b.ollama_overhead) << "\n";
    io.out << "  other: " << runtime_name(b.gpus.empty() ? GpuRuntime::cuda : gpu_runtime(b.gpus[0]))
           << " context and workspaces (--overhead) and the projector (--mmproj)\n";
  }
  return p.fits ? k_ok : k_no_fit;
}

}  // namespace memplan::cli::gguf_fit
