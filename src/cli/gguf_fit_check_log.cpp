// gguf-fit --check-log: a llama.cpp (or Ollama) log's printed buffers against the prediction
// for the log's own settings (see gguf_fit_common.hpp).
#include "cli/gguf_fit_common.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include <nlohmann/json.hpp>

#include <memplan/error.hpp>
#include "cli/text_table.hpp"
#include "core/base/file_reader.hpp"
#include "core/serving/llamacpp_log.hpp"

namespace memplan::cli::gguf_fit {

// --check-log: the log's own settings, then the prediction against its printed buffers.
int check_log(Built b, const std::string& path, const OutputOptions& out, Io& io) {
  const LlamaCppLog log = parse_llamacpp_log(read_small_file(path, read_limit::k_config, "--check-log"));
  if (log.empty())
    throw Error("--check-log", "\"" + path +
                                   "\" has no llama.cpp buffer lines (\"CUDA0 model buffer size\", \"KV self "
                                   "size\", \"compute buffer size\")");
  LlamaCppRequest& q = b.request;
  if (log.n_ctx) q.n_ctx = *log.n_ctx;
  if (log.n_ubatch) q.n_ubatch = *log.n_ubatch;
  if (log.flash_attn) q.flash_attn = *log.flash_attn;
  if (log.sched_copies) q.sched_max_copies = *log.sched_copies;  // a build's GGML_SCHED_MAX_COPIES
  // The log's own sequences; builds before llama.cpp PR 14363 print neither and always unify.
  q.n_seq = log.n_seq_max.value_or(1);
  q.n_outputs = log.n_outputs_max.value_or(0);  // older logs print none: every token
  q.kv_unified = log.kv_unified.value_or(true);
  if (!log.cache_k.empty()) q.cache_k = cache_type("--check-log", log.cache_k);
  if (!log.cache_v.empty()) q.cache_v = cache_type("--check-log", log.cache_v);
  struct LogRow {
    std::string what;
    double predicted, logged;
    double slack = 0;  // MiB the log's rounding allows besides the 5%
    // With mmap the CPU_Mapped buffer is the file's range from the first to the last host tensor
    // (llama-model.cpp load_all_data maps one span per file): the host tensors at least, and the
    // GPU tensors stored between them. Only a logged span below the prediction is an error.
    bool span = false;
  };
  std::vector<LogRow> rows;
  if (log.ollama) {
    // Ollama's estimate before it started the runner: the same inputs (free memory, overhead,
    // requested layers) through memplan's copy of that version's rule. The runner's -c is
    // num_ctx x OLLAMA_NUM_PARALLEL.
    const OllamaOffloadLine& ol = *log.ollama;
    Built ob = b;
    ob.request.n_ctx = std::max<uint64_t>(q.n_ctx / b.ollama_parallel, 1);
    ob.request.n_gpu_layers.reset();
    if (ol.requested >= 0) ob.request.n_gpu_layers = static_cast<uint64_t>(ol.requested);
    if (ol.gpu_overhead) ob.ollama_overhead = static_cast<uint64_t>(*ol.gpu_overhead);
    std::vector<uint64_t> free;
    for (double x : ol.available) free.push_back(static_cast<uint64_t>(x));
    if (free.empty()) free = q.gpu_bytes;
    const OllamaPlacement o = ollama_placement(ob, &free);
    // HumanBytes2 prints one decimal: a logged "1.3 GiB" is 1.25 - 1.35 GiB.
    auto slack = [](double logged_mib) { return logged_mib >= 1024 ? 0.05 * 1024 : 0.05; };
    rows.push_back(
        {"Ollama num_gpu (layers)", static_cast<double>(o.layers), static_cast<double>(ol.offload)});
    if (ol.kv)
      rows.push_back({"Ollama KV estimate", in_mib(o.graph.kv_total), *ol.kv / k_mib, slack(*ol.kv / k_mib)});
    if (ol.graph_full)
      rows.push_back({"Ollama graph, full offload", in_mib(o.graph.full_offload), *ol.graph_full / k_mib,
                      slack(*ol.graph_full / k_mib)});
    if (ol.graph_partial)
      rows.push_back({"Ollama graph, partial offload", in_mib(o.graph.partial_offload),
                      *ol.graph_partial / k_mib, slack(*ol.graph_partial / k_mib)});
    if (!log.offloaded) q.n_gpu_layers = o.layers;
  }
  if (log.offloaded) q.n_gpu_layers = *log.offloaded;
  // A partial offload shows the build's order: the output layer among the offloaded ones (PR 18148
  // on) or not (earlier builds).
  if (log.offloaded && log.layers_total && *log.offloaded < *log.layers_total)
    q.output_first = log.output_offloaded;
  q.reserve_bytes = 0;
  const LlamaCppPlan p = plan_llamacpp(q);
  for (const auto& [dev, v] : log.model_mib) {
    if (const long i = gpu_buffer_index(dev); i >= 0) {
      if (static_cast<size_t>(i) < p.gpus.size())
        rows.push_back({dev + " model", in_mib(p.gpus[i].model), v});
    } else if (dev == "CPU" || dev == "CPU_Mapped") {
      rows.push_back({dev + " model", in_mib(p.host.model), v, 0, dev == "CPU_Mapped"});
    }
  }
  uint64_t kv_total = p.host.kv;
  for (const LlamaCppDevice& d : p.gpus) kv_total += d.kv;
  if (log.kv_total_mib) rows.push_back({"KV cache", in_mib(kv_total), *log.kv_total_mib});
  for (const auto& [dev, v] : log.compute_mib) {
    const long i = gpu_buffer_index(dev);
    if (i >= 0 && static_cast<size_t>(i) < p.gpus.size())
      rows.push_back({dev + " compute", in_mib(p.gpus[i].compute), v});
  }
  bool all = true;
  nlohmann::json list = nlohmann::json::array();
  using A = TextTable::Align;
  TextTable t({{"buffer", A::left},
               {"predicted", A::right},
               {"logged", A::right},
               {"error", A::right},
               {"within 5%", A::left}});
  for (const LogRow& r : rows) {
    const double err = r.logged > 0 ? (r.predicted - r.logged) / r.logged : (r.predicted > 0 ? 1.0 : 0.0);
    const bool layers = r.what.find("(layers)") != std::string::npos;
    const bool ok = layers ? r.predicted == r.logged
                           : (err <= 0.05 && err >= -0.05) || std::abs(r.predicted - r.logged) <= r.slack ||
                                 (r.span && r.logged >= r.predicted);
    all = all && ok;
    std::ostringstream e, pr, lg;
    e.setf(std::ios::fixed);
    pr.setf(std::ios::fixed);
    lg.setf(std::ios::fixed);
    e.precision(2);
    pr.precision(2);
    lg.precision(2);
    e << err * 100 << "%";
    if (layers) {
      pr.precision(0);
      lg.precision(0);
    }
    pr << r.predicted << (layers ? "" : " MiB");
    lg << r.logged << (layers ? "" : " MiB");
    t.add_row({r.what, pr.str(), lg.str(), e.str(), ok ? "yes" : "no"});
    list.push_back({{"buffer", r.what},
                    {"predicted_mib", r.predicted},
                    {"logged_mib", r.logged},
                    {"error", err},
                    {"within_5_percent", ok}});
  }
  if (out.format == Format::json) {
    io.out << nlohmann::json{{"schema", "memplan.gguf-fit-check/1"},
                             {"n_ctx", q.n_ctx},
                             {"n_ubatch", q.n_ubatch},
                             {"flash_attn", q.flash_attn},
                             {"n_gpu_layers", p.n_gpu_layers},
                             {"buffers", list},
                             {"all_within_5_percent", all}}
                  .dump(2)
           << "\n";
  } else {
    io.out << "  the log's settings: n_ctx " << q.n_ctx << ", n_ubatch " << q.n_ubatch << ", flash_attn "
           << (q.flash_attn ? "on" : "off") << ", cache " << cache_lower(q.cache_k) << "/"
           << cache_lower(q.cache_v) << ", -ngl " << p.n_gpu_layers << "\n\n";
    io.out << (out.format == Format::markdown ? t.render_markdown() : t.render());
  }
  return all ? k_ok : k_no_fit;
}

}  // namespace memplan::cli::gguf_fit
