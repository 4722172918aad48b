// `memplan probe`: the real GPUs of this machine, read through NVML (src/probe/nvml_probe.cpp).
// Exit 0 when at least one device was read, 3 when none (with the reason).
#include <memory>
#include <sstream>

#include <nlohmann/json.hpp>

#include <memplan/probe.hpp>
#include <memplan/quantity.hpp>

#include "cli/command.hpp"
#include "cli/commands_list.hpp"
#include "cli/text_table.hpp"

namespace memplan::cli {
namespace {

std::string cc_text(const ProbedDevice& d) {
  return d.cc_major < 0 ? std::string() : std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor);
}

nlohmann::ordered_json null_or(const std::string& s) {
  return s.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(s);
}

nlohmann::ordered_json to_json(const ProbeReport& report, const ProbeOptions& options) {
  nlohmann::ordered_json devices = nlohmann::ordered_json::array();
  for (const ProbedDevice& d : report.devices) {
    const bool read = d.error.empty();
    devices.push_back({
        {"index", d.index},
        {"nvml_index", d.nvml_index},
        {"name", d.name},
        {"uuid", null_or(d.uuid)},
        {"memory_total_bytes",
         read ? nlohmann::ordered_json(d.total_bytes) : nlohmann::ordered_json(nullptr)},
        {"memory_used_bytes", read ? nlohmann::ordered_json(d.used_bytes) : nlohmann::ordered_json(nullptr)},
        {"memory_free_bytes", read ? nlohmann::ordered_json(d.free_bytes) : nlohmann::ordered_json(nullptr)},
        {"memory_reserved_bytes", read && d.reserved_known ? nlohmann::ordered_json(d.reserved_bytes)
                                                           : nlohmann::ordered_json(nullptr)},
        {"compute_capability", null_or(cc_text(d))},
        {"bf16", d.bf16},
        {"fp8", d.fp8},
        {"mig", d.mig},
        {"parent_uuid", null_or(d.parent_uuid)},
        {"error", null_or(d.error)},
    });
  }
  nlohmann::ordered_json inputs = {
      {"library", null_or(options.library)},
      {"cuda_visible_devices",
       options.cuda_visible_devices ? nlohmann::ordered_json(*options.cuda_visible_devices) : nullptr},
      {"cuda_device_order",
       options.cuda_device_order ? nlohmann::ordered_json(*options.cuda_device_order) : nullptr},
  };
  return {{"schema", "memplan.probe/1"},
          {"inputs", inputs},
          {"library", null_or(report.library)},
          {"driver_version", null_or(report.driver_version)},
          {"devices", devices},
          {"notes", report.notes},
          {"error", null_or(report.error)}};
}

// One row per device, as strings; bytes raw (csv) or human (table, markdown).
std::vector<std::vector<std::string>> rows(const ProbeReport& report, Format format, Units units) {
  auto bytes = [&](uint64_t b) { return format == Format::csv ? std::to_string(b) : format_bytes(b, units); };
  std::vector<std::vector<std::string>> out;
  for (const ProbedDevice& d : report.devices) {
    const bool read = d.error.empty();
    out.push_back({format == Format::csv ? std::to_string(d.index) : "cuda:" + std::to_string(d.index),
                   d.name, read ? bytes(d.total_bytes) : "?",
                   read && d.reserved_known ? bytes(d.reserved_bytes) : "?", read ? bytes(d.used_bytes) : "?",
                   read ? bytes(d.free_bytes) : "?", cc_text(d).empty() ? "?" : cc_text(d),
                   d.bf16 ? "yes" : "no", d.fp8 ? "yes" : "no", d.mig ? "yes" : "no", d.uuid});
  }
  return out;
}

void print_table(std::ostream& out, const ProbeReport& report, const OutputOptions& o) {
  const std::vector<std::string> header = {"device", "name", "total", "reserved", "used", "free",
                                           "cc",     "bf16", "fp8",   "mig",      "uuid"};
  const auto body = rows(report, o.format, o.units);
  if (o.format == Format::csv) {
    out << "index,name,memory_total_bytes,memory_reserved_bytes,memory_used_bytes,memory_free_bytes,"
           "compute_capability,bf16,fp8,mig,uuid\n";
    for (const auto& r : body) {
      for (size_t i = 0; i < r.size(); ++i) out << (i ? "," : "") << csv_field(r[i] == "?" ? "" : r[i]);
      out << "\n";
    }
    return;
  }
  if (!o.quiet)
    out << "NVIDIA driver " << (report.driver_version.empty() ? "(version unknown)" : report.driver_version)
        << ", " << report.library << "\n";
  if (o.format == Format::markdown) {
    auto line = [&](const std::vector<std::string>& cells) {
      out << "|";
      for (const auto& c : cells) out << " " << c << " |";
      out << "\n";
    };
    line(header);
    out << "|---|---|--:|--:|--:|--:|---|---|---|---|---|\n";
    for (const auto& r : body) line(r);
  } else {
    std::vector<size_t> width(header.size());
    for (size_t i = 0; i < header.size(); ++i) width[i] = header[i].size();
    for (const auto& r : body)
      for (size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
    auto line = [&](const std::vector<std::string>& cells) {
      std::string s;
      for (size_t i = 0; i < cells.size(); ++i) {
        const bool right = i >= 2 && i <= 5;  // byte columns
        const std::string pad(width[i] - cells[i].size(), ' ');
        s += (i ? "  " : "") + (right ? pad + cells[i] : cells[i] + (i + 1 < cells.size() ? pad : ""));
      }
      out << s << "\n";
    };
    line(header);
    for (const auto& r : body) line(r);
  }
  if (o.quiet) return;
  for (const ProbedDevice& d : report.devices)
    if (!d.error.empty()) out << "note: cuda:" << d.index << ": " << d.error << "\n";
  for (const std::string& n : report.notes) out << "note: " << n << "\n";
}

}  // namespace

void add_probe(CLI::App& sub, Runner& run) {
  auto raw = std::make_shared<RawOutputOptions>();
  add_output_options(sub, *raw);
  sub.footer(
      "Reads the GPUs through NVIDIA's NVML (libnvidia-ml.so.1, loaded at run time). CUDA_VISIBLE_DEVICES\n"
      "narrows and renumbers them as CUDA does; MEMPLAN_NVML_LIBRARY names another library.\n"
      "Exit 0: at least one GPU read; 3: none (the reason is printed).");
  run = [raw](Io& io) {
    const OutputOptions o = resolve_output_options(*raw, io);
    const ProbeOptions options = ProbeOptions::from_environment();
    const ProbeReport report = probe_devices(options);
    if (o.format == Format::json) {
      io.out << to_json(report, options).dump(2) << "\n";
      return report.error.empty() ? int(k_ok) : int(k_no_device);
    }
    if (!report.error.empty()) {
      io.err << "memplan: probe: " << report.error << "\n";
      return int(k_no_device);
    }
    print_table(io.out, report, o);
    return int(k_ok);
  };
}

}  // namespace memplan::cli
