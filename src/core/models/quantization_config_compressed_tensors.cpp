// compressed-tensors' quantization_config: the tensors each quantised matrix stores
// (quantization_config.cpp's header comment lists the shapes).

#include "core/models/quant_reader.hpp"

#include "core/models/module_names.hpp"

namespace memplan::detail::quant {

Scheme compressed_tensors(const QuantReader& q, const std::string& other_format, uint64_t other_bytes_per,
                          std::vector<std::string>& notes) {
  std::string fmt = q.text("format").value_or("");
  const nlohmann::json* groups = q.find("config_groups");
  if (!groups || !groups->is_object() || groups->size() != 1)
    q.fail("config_groups", "memplan counts compressed-tensors checkpoints with exactly one config group");
  const nlohmann::json& g = groups->begin().value();
  // Newer configs also name the format per group ("mixed-precision" at the top when they differ).
  if (auto gf = g.find("format");
      gf != g.end() && gf->is_string() && (fmt.empty() || fmt == "mixed-precision"))
    fmt = gf->get<std::string>();
  auto wit = g.find("weights");
  if (wit == g.end() || !wit->is_object()) q.fail("config_groups", "the group has no \"weights\" scheme");
  const nlohmann::json& w = *wit;
  QuantReader wr(w, q.file());
  const uint64_t bits = wr.count("num_bits").value_or(8);
  const std::string type = wr.text("type").value_or("int");
  const std::string strategy = wr.text("strategy").value_or("tensor");
  const bool symmetric = wr.flag("symmetric", true);
  bool no_groups = false;
  const uint64_t gs = wr.count("group_size", &no_groups).value_or(0);
  std::vector<std::string> target_names;
  if (auto t = g.find("targets"); t != g.end() && t->is_array())
    for (const nlohmann::json& e : *t)
      if (e.is_string()) target_names.push_back(e.get<std::string>());
  const NameList targets = name_list(q.subject("config_groups"), target_names, true);
  const NameList ignore = name_list(q.subject("ignore"), q.names("ignore"), true);
  Scheme s;
  s.quantized = [targets, ignore](const LinearGroup&, const std::string& module) {
    return !any_match(ignore, module) && (targets.empty() || any_match(targets, module));
  };
  // actorder "group" (true in older configs): compressed-tensors registers weight_g_idx int32 [in].
  bool g_idx = false;
  if (const nlohmann::json* a = wr.find("actorder")) {
    if (a->is_boolean())
      g_idx = a->get<bool>();
    else if (a->is_string())
      g_idx = a->get<std::string>() == "group";
    else
      q.fail("config_groups", "weights actorder " + json_brief(*a) + " is not a string or true/false");
  }
  // Static input activations: each layer stores input_scale [1] in the model dtype (and an
  // input_zero_point when asymmetric); dynamic ones ("dynamic": true or "local") store nothing.
  uint64_t input_bytes = 0;
  std::string input_note;
  if (auto it = g.find("input_activations"); it != g.end() && !it->is_null()) {
    if (!it->is_object()) q.fail("config_groups", "input_activations is not an object");
    QuantReader ir(*it, q.file());
    const nlohmann::json* d = ir.find("dynamic");
    const bool dynamic =
        d && ((d->is_boolean() && d->get<bool>()) || (d->is_string() && d->get<std::string>() == "local"));
    if (!dynamic) {
      const std::string is = ir.text("strategy").value_or("tensor");
      if (is != "tensor" && is != "token")
        q.fail("config_groups", "static input_activations strategy \"" + is + "\" is not tensor or token");
      input_bytes = other_bytes_per;
      input_note = ", input_scale [1] in " + other_format;
      if (!ir.flag("symmetric", true)) {
        input_bytes = add(input_bytes, ceil_div(ir.count("num_bits").value_or(8), 8));
        input_note += " and input_zero_point [1]";
      }
    }
  }
  const uint64_t extra_in = g_idx ? 4 : 0;  // bytes per input feature
  auto scale_count = [strategy, gs, &q](uint64_t in, uint64_t out) -> uint64_t {
    if (strategy == "tensor") return 1;
    if (strategy == "channel") return out;
    if (strategy == "group") return mul(out, ceil_div(in, gs));
    q.fail("config_groups", "weights strategy \"" + strategy + "\" is not tensor, channel or group");
  };
  if (fmt == "pack-quantized" && type == "int") {
    if (32 % bits != 0) q.fail("config_groups", to_s(bits) + "-bit weights do not pack into int32");
    if (strategy == "group" && !gs) q.fail("config_groups", "group strategy without a group_size");
    s.format = int_format(bits);
    s.bytes = [=](uint64_t in, uint64_t out) {
      const uint64_t scales = scale_count(in, out);
      uint64_t b = add(mul(mul(out, ceil_div(mul(in, bits), 32)), 4), mul(scales, other_bytes_per));
      b = add(b, 16);  // weight_shape int64 [2]
      if (!symmetric) b = add(b, mul(mul(ceil_div(mul(out, bits), 32), scales / out ? scales / out : 1), 4));
      return add(b, add(mul(in, extra_in), input_bytes));
    };
    notes.push_back("compressed-tensors pack-quantized " + to_s(bits) + "-bit " + strategy +
                    ": weight_packed int32 [out, in*bits/32], weight_scale in " + other_format +
                    ", weight_shape int64 [2]" + (symmetric ? "" : ", weight_zero_point int32") +
                    (g_idx ? ", weight_g_idx int32 [in] (actorder group)" : "") + input_note);
  } else if (fmt == "float-quantized" && type == "float" && bits == 8) {
    s.format = "fp8-e4m3";
    s.bytes = [=](uint64_t in, uint64_t out) {
      return add(add(mul(in, out), mul(scale_count(in, out), other_bytes_per)),
                 add(mul(in, extra_in), input_bytes));
    };
    notes.push_back("compressed-tensors float-quantized fp8 " + strategy +
                    ": weight [out, in] in 1 byte, weight_scale in " + other_format +
                    (g_idx ? ", weight_g_idx int32 [in] (actorder group)" : "") + input_note);
  } else {
    q.fail("format",
           "\"" + fmt + "\" with " + type + " " + to_s(bits) +
               "-bit weights is not a compressed-tensors layout memplan counts (expected pack-quantized "
               "int or float-quantized fp8)");
  }
  (void)no_groups;
  return s;
}

}  // namespace memplan::detail::quant
