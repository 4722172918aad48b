#include "core/formats/hardware_support.hpp"
#include "core/base/text.hpp"

#include <cctype>
#include <vector>

#include <memplan/error.hpp>
#include "core/base/did_you_mean.hpp"
#include "core/formats/number_format.hpp"

namespace memplan {
namespace {

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

// What each name needs: a row of facts, not an if-chain.
struct Rule {
  const char* name;
  ComputeCapability needs;
  FormatFamily family;  // groups names that share reasons
};

const std::vector<Rule>& rules() {
  using F = FormatFamily;
  static const std::vector<Rule> table = {
      {"fp64", {0, 0}, F::plain},      {"fp32", {0, 0}, F::plain},
      {"tf32", {8, 0}, F::tf32},       {"fp16", {5, 3}, F::fp16},
      {"amp-fp16", {5, 3}, F::fp16},   {"mixed-fp16", {5, 3}, F::fp16},
      {"bf16", {8, 0}, F::bf16},       {"amp-bf16", {8, 0}, F::bf16},
      {"mixed-bf16", {8, 0}, F::bf16}, {"fp8", {8, 9}, F::fp8},
      {"fp8-e4m3", {8, 9}, F::fp8},    {"fp8-e5m2", {8, 9}, F::fp8},
      {"int8", {7, 5}, F::int8},       {"int4", {0, 0}, F::weight_only},
      {"nf4", {0, 0}, F::weight_only}, {"nf4-dq", {0, 0}, F::weight_only},
  };
  return table;
}

// Weight-only formats of the storage table (dequantised to the compute dtype on any card).
const std::vector<Rule>& weight_only_rules() {
  static const std::vector<Rule> table = {
      {"gptq-4bit", {0, 0}, FormatFamily::weight_only},
      {"awq-4bit", {0, 0}, FormatFamily::weight_only},
      {"mxfp4", {0, 0}, FormatFamily::weight_only},
  };
  return table;
}

const Rule& find_rule(std::string_view subject, std::string_view name) {
  const std::string key = to_lower(name);
  std::vector<std::string> names;
  for (const Rule& r : rules()) {
    if (key == r.name) return r;
    names.emplace_back(r.name);
  }
  for (const Rule& r : weight_only_rules())  // --quantize formats only: not listed for --precision
    if (key == r.name) return r;
  // Format aliases (half, bfloat16, e4m3, ...) resolve through the number-format table.
  try {
    const std::string canonical = find_number_format(subject, name).name;
    for (const Rule& r : rules())
      if (canonical == r.name) return r;
  } catch (const Error&) {
  }
  std::string list;
  for (size_t i = 0; i < names.size(); ++i) list += (i ? ", " : "") + names[i];
  throw Error(std::string(subject), "\"" + std::string(name) +
                                        "\" is not a format or precision recipe (expected one of " + list +
                                        did_you_mean(name, names) + ")");
}

}  // namespace

ComputeCapability parse_compute_capability(std::string_view subject, std::string_view text) {
  const std::string bad =
      "\"" + std::string(text) + "\" is not a compute capability (expected e.g. 7.5, 8.0, 8.9, 9.0)";
  std::string t = to_lower(text);
  if (t.rfind("sm_", 0) == 0)
    t = t.substr(3);
  else if (t.rfind("sm", 0) == 0)
    t = t.substr(2);
  ComputeCapability cc;
  const size_t dot = t.find('.');
  if (dot != std::string::npos) {
    const std::string a = t.substr(0, dot), b = t.substr(dot + 1);
    if (!all_digits(a) || !all_digits(b) || a.size() > 2 || b.size() != 1)
      throw Error(std::string(subject), bad);
    cc.major = std::stoi(a);
    cc.minor = std::stoi(b);
  } else {
    // "80" -> 8.0, "120" -> 12.0: the last digit is the minor version.
    if (!all_digits(t) || t.size() < 2 || t.size() > 3) throw Error(std::string(subject), bad);
    cc.major = std::stoi(t.substr(0, t.size() - 1));
    cc.minor = t.back() - '0';
  }
  if (cc.major < 1) throw Error(std::string(subject), bad);
  return cc;
}

HardwareSupport hardware_support(std::string_view subject, std::string_view name, ComputeCapability cc) {
  HardwareSupport s;
  if (all_digits(name)) return s;  // a bare byte count ("2" as a precision) names no format
  const Rule& rule = find_rule(subject, name);
  s.family = rule.family;
  s.needs = rule.needs;
  s.native = cc >= rule.needs;
  const ComputeCapability ampere{8, 0};
  if (!s.native) {
    switch (rule.family) {
      case FormatFamily::bf16:
        s.use = to_lower(name) == "mixed-bf16" ? Substitute::mixed_fp16_scaler : Substitute::amp_fp16_scaler;
        break;
      case FormatFamily::fp8:
        s.use = cc >= ampere ? Substitute::amp_bf16_or_int8 : Substitute::amp_fp16_scaler_or_int8;
        break;
      case FormatFamily::tf32:
        s.use = Substitute::fp32_same_memory;
        break;
      case FormatFamily::fp16:
        s.use = Substitute::fp32;
        break;
      case FormatFamily::int8:
        s.use = Substitute::int8_weights_or_fp16;
        break;
      case FormatFamily::plain:
      case FormatFamily::weight_only:
        break;
    }
  } else if (rule.family == FormatFamily::fp16 && cc < ComputeCapability{7, 0}) {
    s.remark = Remark::fp16_no_tensor_cores;
  } else if (rule.family == FormatFamily::weight_only && cc < ampere) {
    s.remark = Remark::weight_only_fp16_compute;
  }
  return s;
}

HardwareSupport hardware_support(std::string_view subject, std::string_view name,
                                 std::string_view compute_capability) {
  return hardware_support(subject, name, parse_compute_capability(subject, compute_capability));
}

}  // namespace memplan
