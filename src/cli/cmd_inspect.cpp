// memplan inspect PATH: what memplan reads from a model's files (config.json, safetensors
// headers, GGUF header): tensors by dtype, parameters, bytes, architecture fields, each layer
// kind (dense / MoE / MTP, full / sliding / chunked attention) with what was counted and the
// config fields it came from, notes.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <memplan/model_files.hpp>
#include <memplan/quantity.hpp>
#include "core/base/file_reader.hpp"

#include "cli/command.hpp"
#include "cli/commands_list.hpp"
#include "cli/model_source.hpp"
#include "cli/options.hpp"
#include "cli/text_table.hpp"

namespace memplan::cli {
namespace {

struct InspectArgs {
  std::string path;
  bool assume_llama = false;
  RawOutputOptions raw;
  bool offline = false;
};

nlohmann::json layer_kinds_json(const std::vector<LayerKind>& kinds) {
  nlohmann::json rows = nlohmann::json::array();
  for (const LayerKind& k : kinds)
    rows.push_back(
        {{"kind", k.kind},
         {"layers", k.layers},
         {"parameters_per_layer", k.parameters ? nlohmann::json(k.parameters) : nlohmann::json(nullptr)},
         {"kv_elements_per_token",
          k.kv_elements_per_token ? nlohmann::json(k.kv_elements_per_token) : nlohmann::json(nullptr)},
         {"window", k.window ? nlohmann::json(k.window) : nlohmann::json(nullptr)},
         {"counted", k.counted},
         {"fields", k.fields}});
  return rows;
}

std::string layer_kinds_text(const std::vector<LayerKind>& kinds) {
  if (kinds.empty()) return "";
  std::string s = "per layer kind:\n";
  for (const LayerKind& k : kinds) {
    s += fmt::format("  {} x {}: ", k.kind, k.layers);
    if (k.parameters) s += group_thousands(k.parameters) + " parameters each (" + k.counted + ")";
    if (k.kv_elements_per_token)
      s += group_thousands(k.kv_elements_per_token) + " cached elements per token (" + k.counted + ")";
    s += "; from " + k.fields + "\n";
  }
  return s;
}

nlohmann::json arch_json(const TransformerArch& a) {
  return {{"model_type", a.model_type},
          {"causal", a.causal},
          {"layers", a.layers},
          {"hidden", a.hidden},
          {"heads", a.heads},
          {"kv_heads", a.resolved_kv_heads()},
          {"head_dim", a.resolved_head_dim()},
          {"intermediate", a.intermediate},
          {"vocab", a.vocab},
          {"max_positions", a.max_positions},
          {"gated_mlp", a.gated_mlp},
          {"activation", a.activation},
          {"norm", a.norm},
          {"tied_embeddings", a.tied_embeddings},
          {"hidden_dropout", a.hidden_dropout},
          {"attention_dropout", a.attention_dropout},
          {"experts", a.experts},
          {"experts_per_token", a.experts_per_token},
          {"encoder_decoder", a.encoder_decoder},
          {"decoder_layers", a.decoder_layers}};
}

std::string render_json(const ModelFileReport& r) {
  nlohmann::json j;
  j["schema"] = "memplan.inspect/1";
  j["inputs"] = {{"path", r.path}};
  j["kind"] = to_string(r.kind);
  j["files"] = r.files;
  nlohmann::json rows = nlohmann::json::array();
  for (const DtypeTotal& d : r.by_dtype)
    rows.push_back(
        {{"dtype", d.dtype}, {"tensors", d.tensors}, {"elements", d.elements}, {"bytes", d.bytes}});
  j["by_dtype"] = rows;
  j["tensors"] = r.tensors;
  j["elements"] = r.elements;
  j["bytes"] = r.bytes;
  const ModelSpec& m = r.model;
  j["name"] = m.name;
  j["parameters"] = m.parameters;
  j["active_parameters"] =
      m.active_parameters ? nlohmann::json(m.active_parameters) : nlohmann::json(nullptr);
  j["parameter_tensors"] = m.tensors;
  j["weight_bytes"] = m.weight_bytes ? nlohmann::json(m.weight_bytes) : nlohmann::json(nullptr);
  j["weight_format"] = m.weight_format.empty() ? nlohmann::json(nullptr) : nlohmann::json(m.weight_format);
  j["architecture"] = m.arch ? arch_json(*m.arch) : nlohmann::json(nullptr);
  j["config_family"] = r.config_family.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.config_family);
  j["config_fields"] = r.config_fields;
  j["mtp_parameters"] = m.mtp_parameters ? nlohmann::json(m.mtp_parameters) : nlohmann::json(nullptr);
  j["layer_kinds"] = layer_kinds_json(m.layer_kinds);
  j["assumption"] = m.assumption.empty() ? nlohmann::json(nullptr) : nlohmann::json(with_flags(m.assumption));
  nlohmann::json notes = nlohmann::json::array();
  for (const std::string& n : m.notes) notes.push_back(with_flags(n));
  j["notes"] = notes;
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string render_dtype_rows(const ModelFileReport& r, const OutputOptions& o) {
  std::string s;
  if (o.format == Format::csv) {
    CsvWriter csv;
    csv.row({"dtype", "tensors", "elements", "bytes"});
    for (const DtypeTotal& d : r.by_dtype)
      csv.row({d.dtype, std::to_string(d.tensors), std::to_string(d.elements), std::to_string(d.bytes)});
    csv.row({"total", std::to_string(r.tensors), std::to_string(r.elements), std::to_string(r.bytes)});
    return csv.str();
  }
  if (o.format == Format::markdown) {
    s += "| dtype | tensors | elements | bytes |\n|---|---:|---:|---:|\n";
    for (const DtypeTotal& d : r.by_dtype)
      s += fmt::format("| {} | {} | {} | {} |\n", d.dtype, d.tensors, group_thousands(d.elements),
                       format_bytes(d.bytes, o.units));
    s += fmt::format("| total | {} | {} | {} |\n", r.tensors, group_thousands(r.elements),
                     format_bytes(r.bytes, o.units));
    return s;
  }
  s += fmt::format("  {:<12} {:>8} {:>18} {:>12}\n", "dtype", "tensors", "elements", "bytes");
  for (const DtypeTotal& d : r.by_dtype)
    s += fmt::format("  {:<12} {:>8} {:>18} {:>12}\n", d.dtype, d.tensors, group_thousands(d.elements),
                     format_bytes(d.bytes, o.units));
  s += fmt::format("  {:<12} {:>8} {:>18} {:>12}\n", "total", r.tensors, group_thousands(r.elements),
                   format_bytes(r.bytes, o.units));
  return s;
}

std::string render_text(const ModelFileReport& r, const OutputOptions& o) {
  const ModelSpec& m = r.model;
  if (o.format == Format::csv)
    return r.by_dtype.empty() ? "parameters\n" + std::to_string(m.parameters) + "\n"
                              : render_dtype_rows(r, o);
  if (o.quiet) return std::to_string(m.parameters) + "\n";
  std::string s = fmt::format("{} ({})\n", r.path, to_string(r.kind));
  for (const std::string& f : r.files) s += "  read " + f + "\n";
  if (!r.by_dtype.empty()) s += "\n" + render_dtype_rows(r, o);
  s += fmt::format("\nparameters: {} ({})", group_thousands(m.parameters), format_count(m.parameters));
  if (m.tensors) s += fmt::format(" in {} tensors", m.tensors);
  s += "\n";
  if (m.active_parameters)
    s += fmt::format("active per token: {} ({})\n", group_thousands(m.active_parameters),
                     format_count(m.active_parameters));
  if (m.mtp_parameters)
    s += fmt::format("multi-token prediction: {} ({}) more in the checkpoint, {} ({}) with them\n",
                     group_thousands(m.mtp_parameters), format_count(m.mtp_parameters),
                     group_thousands(m.parameters + m.mtp_parameters),
                     format_count(m.parameters + m.mtp_parameters));
  if (!m.assumption.empty()) s += "assumed: " + with_flags(m.assumption) + "\n";
  if (m.weight_bytes)
    s += fmt::format("weight bytes: {} ({} B)\n", format_bytes(m.weight_bytes, o.units),
                     group_thousands(m.weight_bytes));
  s += "weight format: " + (m.weight_format.empty() ? std::string("unknown") : m.weight_format) + "\n";
  if (m.arch) {
    const TransformerArch& a = *m.arch;
    s += fmt::format("architecture: {}{}{}\n", a.model_type,
                     r.config_family.empty() ? "" : ", counted as " + r.config_family,
                     a.causal ? ", causal" : (a.encoder_decoder ? ", encoder-decoder" : ", encoder"));
    s += fmt::format(
        "  layers {}, hidden {}, heads {}, kv_heads {}, head_dim {}, intermediate {}, vocab {}, "
        "max_positions {}\n",
        a.layers, a.hidden, a.heads, a.resolved_kv_heads(), a.resolved_head_dim(), a.intermediate, a.vocab,
        a.max_positions);
    s += fmt::format("  mlp {} ({}), norm {}, tied embeddings {}, dropout {}/{}",
                     a.gated_mlp ? "gated" : "plain", a.activation, a.norm, a.tied_embeddings ? "yes" : "no",
                     a.hidden_dropout, a.attention_dropout);
    if (a.experts) s += fmt::format(", experts {} (top-{})", a.experts, a.experts_per_token);
    if (a.encoder_decoder) s += fmt::format(", decoder layers {}", a.decoder_layers);
    s += "\n";
  }
  s += layer_kinds_text(m.layer_kinds);
  if (!r.config_fields.empty()) {
    s += "config fields read:";
    for (size_t i = 0; i < r.config_fields.size(); ++i) s += (i ? ", " : " ") + r.config_fields[i];
    s += "\n";
  }
  if (!m.notes.empty()) {
    s += "notes:\n";
    for (const std::string& n : m.notes) s += "  - " + with_flags(n) + "\n";
  }
  return s;
}

}  // namespace

void add_inspect(CLI::App& sub, Runner& run) {
  auto args = std::make_shared<InspectArgs>();
  sub.add_option("path", args->path,
                 "config.json, .safetensors, model.safetensors.index.json, .gguf, or a model folder")
      ->required();
  sub.add_flag("--assume-llama", args->assume_llama,
               "Count a config.json of an unknown model_type as a llama-style decoder (the output names it)");
  add_output_options(sub, args->raw);
  sub.add_flag("--offline", args->offline,
               "A Hugging Face model id from the local caches only, never the network");
  run = [args](Io& io) {
    OutputOptions o = resolve_output_options(args->raw, io);
    // "org/name[@revision]" that is not a local path: the Hugging Face cache's snapshot (model_source.cpp).
    const std::optional<HubModelId> hub = is_regular_file(args->path) || is_directory(args->path)
                                              ? std::nullopt
                                              : parse_hub_model_id(args->path);
    ModelReadOptions read;
    read.assume_llama = args->assume_llama;
    ModelFileReport r =
        inspect_model_files(hub ? resolve_hub_snapshot(*hub, "path", args->offline) : args->path, read);
    if (hub) r.path = args->path;
    io.out << (o.format == Format::json ? render_json(r) : render_text(r, o));
    return k_ok;
  };
}

}  // namespace memplan::cli
