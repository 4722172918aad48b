#include "cli/help_layout.hpp"

#include <algorithm>
#include <memory>

#include "cli/text_wrap.hpp"

namespace memplan::cli {
namespace {

using G = HelpGroup;

// The help of a planning command fits a 100-column terminal: flags and placeholders in the first
// 34 columns (a longer one puts its description on the next line), descriptions wrapped after.
constexpr size_t k_help_columns = 100;
constexpr size_t k_name_columns = 34;

// Every option of the planning commands (estimate, fit, max-batch, advise, serve, gguf-fit,
// why-oom, plot): its group and the placeholder of its value. Placeholders: N a count, SIZE bytes
// (24GiB), LIST a comma list, FILE / PATH (a file or a folder), {a|b} the values when few and
// short, else NAME (the description or the error lists them).
const HelpRow k_rows[] = {
    // the model: where it comes from and its architecture
    {"--plan", G::model, "FILE"},
    {"--from", G::model, "FILE"},
    {"--from-command", G::model, "COMMAND"},
    {"--presets", G::model, "PATH"},
    {"--offline", G::model, ""},
    {"--params", G::model, "N"},
    {"--model", G::model, "NAME"},
    {"--config", G::model, "FILE"},
    {"--safetensors", G::model, "PATH"},
    {"--gguf", G::model, "FILE"},
    {"--mlp", G::model, "LIST"},
    {"--layers", G::model, "N"},
    {"--hidden", G::model, "N"},
    {"--heads", G::model, "N"},
    {"--kv-heads", G::model, "N"},
    {"--intermediate", G::model, "N"},
    {"--vocab", G::model, "N"},
    {"--family", G::model, "{gpt2|llama|bert}"},
    {"--tensors", G::model, "N"},
    {"--batchnorm", G::model, ""},
    {"--assume-llama", G::model, ""},
    {"--mmproj", G::model, "FILE"},
    // the run: what one step processes
    {"--mode", G::run, "{train|infer}"},
    {"--trainable", G::run, "FRACTION"},
    {"--batch", G::run, "N"},
    {"--seq", G::run, "N"},
    {"--grad-accum", G::run, "N"},
    {"--effective-batch", G::run, "N"},
    {"--max-seq", G::run, ""},
    {"--images", G::run, "N"},
    {"--image-size", G::run, "N"},
    {"--train-vision", G::run, ""},
    {"--prefill-chunk", G::run, "N"},
    {"--logits", G::run, "{last|all}"},
    {"--activation-bytes-per-row", G::run, "SIZE"},
    {"--loss", G::run, "{plain|chunked|fused|logprob}"},
    {"--keep-logits", G::run, ""},
    // the number formats
    {"--precision", G::precision, "NAME"},
    {"--quantize", G::precision, "NAME"},
    {"--kv-format", G::precision, "NAME"},
    {"--grad-format", G::precision, "NAME"},
    // what trades compute or trained parameters for memory
    {"--checkpointing", G::memory_savers, "{none|selective|full}"},
    {"--attention", G::memory_savers, "{eager|sdpa}"},
    {"--optimizer", G::memory_savers, "NAME"},
    {"--lora", G::memory_savers, "RANK"},
    {"--lora-targets", G::memory_savers, "LIST"},
    {"--lora-dtype", G::memory_savers, "{fp32|base}"},
    {"--lora-dropout", G::memory_savers, "P"},
    {"--offload", G::memory_savers, "NAME"},
    // the GPUs and how the run spreads over them
    {"--gpu", G::gpus, "LIST"},
    {"--gpus", G::gpus, "{N|auto}"},
    {"--nodes", G::gpus, "N"},
    {"--gpus-per-node", G::gpus, "N"},
    {"--zero", G::gpus, "{0|1|2|3}"},
    {"--fsdp", G::gpus, "NAME"},
    {"--tp", G::gpus, "N"},
    {"--pp", G::gpus, "N"},
    {"--dp", G::gpus, "N"},
    {"--virtual-stages", G::gpus, "N"},
    {"--micro-batches", G::gpus, "N"},
    {"--sequence-parallel", G::gpus, ""},
    {"--largest-layer", G::gpus, "N"},
    {"--prefetch", G::gpus, "N"},
    {"--wired-limit-mb", G::gpus, "N"},
    {"--against", G::gpus, "{total|free}"},
    {"--gpu-memory", G::gpus, "SIZE"},
    {"--n-gpu-layers", G::gpus, "N"},
    {"--tensor-split", G::gpus, "LIST"},
    // whose code runs the step, and the serving engines' own flags
    {"--torch", G::runtime, "VERSION"},
    {"--cuda", G::runtime, "VERSION"},
    {"--cuda-module-loading", G::runtime, "{lazy|eager}"},
    {"--framework", G::runtime, "NAME"},
    {"--transformers", G::runtime, "VERSION"},
    {"--bitsandbytes", G::runtime, "VERSION"},
    {"--device", G::runtime, "{cuda|cpu}"},
    {"--zero-grad", G::runtime, "{none|zeros}"},
    {"--optimizer-loop", G::runtime, "NAME"},
    {"--expandable-segments", G::runtime, ""},
    {"--overhead", G::runtime, "SIZE"},
    {"--engine", G::runtime, "{vllm|sglang}"},
    {"--gpu-memory-utilization", G::runtime, "FRACTION"},
    {"--max-model-len", G::runtime, "N"},
    {"--max-num-seqs", G::runtime, "N"},
    {"--max-num-batched-tokens", G::runtime, "N"},
    {"--block-size", G::runtime, "N"},
    {"--chunked-prefill", G::runtime, "{on|off}"},
    {"--vllm-version", G::runtime, "VERSION"},
    {"--vllm-entry", G::runtime, "{serve|llm}"},
    {"--mem-fraction-static", G::runtime, "FRACTION"},
    {"--max-total-tokens", G::runtime, "N"},
    {"--chunked-prefill-size", G::runtime, "N"},
    {"--context-length", G::runtime, "N"},
    {"--kv-cache-dtype", G::runtime, "NAME"},
    {"--sglang-version", G::runtime, "VERSION"},
    {"--cuda-graph-max-bs", G::runtime, "N"},
    {"--ctx-size", G::runtime, "N"},
    {"--ubatch-size", G::runtime, "N"},
    {"--swa-full", G::runtime, ""},
    {"--no-op-offload", G::runtime, ""},
    {"--parallel", G::runtime, "N"},
    {"--llamacpp-build", G::runtime, "N"},
    {"--fit", G::runtime, ""},
    {"--fit-target", G::runtime, "N"},
    {"--fit-ctx", G::runtime, "N"},
    {"--kv-unified", G::runtime, ""},
    {"--ngl-order", G::runtime, "{output-first|layers-first}"},
    {"--cache-type-k", G::runtime, "NAME"},
    {"--cache-type-v", G::runtime, "NAME"},
    {"--flash-attn", G::runtime, ""},
    {"--n-cpu-moe", G::runtime, "N"},
    {"--check-log", G::runtime, "FILE"},
    {"--ollama-version", G::runtime, "VERSION"},
    {"--ollama-parallel", G::runtime, "N"},
    {"--ollama-gpu-overhead", G::runtime, "SIZE"},
    // how the result is shown
    {"--format", G::output, "{table|json|markdown|csv}"},
    {"--units", G::output, "{gib|gb}"},
    {"--explain", G::output, ""},
    {"--quiet", G::output, ""},
    {"--bar", G::output, ""},
    {"--no-bar", G::output, ""},
    {"--ascii", G::output, ""},
    {"--width", G::output, "N"},
    {"--vs", G::output, "{batch|seq|precision|step}"},
    {"--limit", G::output, "N"},
    {"--checklist", G::output, ""},
    {"--all", G::output, ""},
    {"--emit", G::output, "[FRAMEWORK]"},
    {"--emit-rank", G::output, "N"},
    {"--help", G::output, ""},
};

const HelpGroup k_group_order[] = {G::model, G::run,     G::precision, G::memory_savers,
                                   G::gpus,  G::runtime, G::output};

// CLI11's formatter with the groups in HelpGroup order (CLI11 2.1 lists them in the order their
// first option was added: the output options would come before a command's own) and each
// description wrapped at k_help_columns.
class GroupedHelp : public CLI::Formatter {
 public:
  GroupedHelp() { column_width(k_name_columns); }

  std::string make_help(const CLI::App* app, std::string name, CLI::AppFormatMode mode) const override {
    if (mode == CLI::AppFormatMode::Sub) return make_expanded(app);
    std::vector<std::string> titles;  // the table's groups in order, then any other
    for (HelpGroup g : k_group_order) titles.emplace_back(help_group_title(g));
    for (const std::string& g : app->get_groups())
      if (std::find(titles.begin(), titles.end(), g) == titles.end()) titles.push_back(g);
    std::string groups;
    for (const std::string& title : titles) {
      std::vector<const CLI::Option*> opts = app->get_options(
          [&title](const CLI::Option* o) { return o->get_group() == title && o->nonpositional(); });
      if (opts.empty()) continue;
      groups += make_group(title, false, opts);  // "\nTitle:\n" and its lines
    }
    return make_description(app) + make_usage(app, name) + make_positionals(app) + groups +
           make_subcommands(app, mode) + "\n" + make_footer(app);
  }

  std::string make_option_desc(const CLI::Option* o) const override {
    std::string out;
    for (const std::string& line : wrap_words(o->get_description(), k_help_columns - k_name_columns))
      out += (out.empty() ? "" : "\n") + line;
    return out;
  }
};

}  // namespace

const char* help_group_title(HelpGroup group) {
  switch (group) {
    case G::model:
      return "Model";
    case G::run:
      return "Run";
    case G::precision:
      return "Precision";
    case G::memory_savers:
      return "Memory savers";
    case G::gpus:
      return "GPUs";
    case G::runtime:
      return "Runtime/engine";
    case G::output:
      return "Output";
  }
  return "Options";
}

const HelpRow* help_row(const std::string& flag) {
  for (const HelpRow& row : k_rows)
    if (flag == row.flag) return &row;
  return nullptr;
}

std::vector<std::string> long_flags(const CLI::App& sub) {
  std::vector<std::string> flags;
  for (const CLI::Option* o : sub.get_options())
    if (!o->get_lnames().empty()) flags.push_back("--" + o->get_lnames().front());
  return flags;
}

void lay_out_help(CLI::App& sub) {
  for (CLI::Option* o : sub.get_options()) {
    if (o->get_lnames().empty()) {  // a positional names its value itself (why-oom's FILE)
      o->type_name("");
      continue;
    }
    const HelpRow* row = help_row("--" + o->get_lnames().front());
    if (!row) continue;
    o->group(help_group_title(row->group));
    if (*row->value) o->type_name(row->value);
  }
  sub.formatter(std::make_shared<GroupedHelp>());
}

}  // namespace memplan::cli
