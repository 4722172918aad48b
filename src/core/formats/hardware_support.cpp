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
  const char* family;  // groups names that share reasons: "bf16", "fp8", "fp16", ...
};

const std::vector<Rule>& rules() {
  static const std::vector<Rule> table = {
      {"fp64", {0, 0}, "plain"},      {"fp32", {0, 0}, "plain"},
      {"tf32", {8, 0}, "tf32"},       {"fp16", {5, 3}, "fp16"},
      {"amp-fp16", {5, 3}, "fp16"},   {"mixed-fp16", {5, 3}, "fp16"},
      {"bf16", {8, 0}, "bf16"},       {"amp-bf16", {8, 0}, "bf16"},
      {"mixed-bf16", {8, 0}, "bf16"}, {"fp8", {8, 9}, "fp8"},
      {"fp8-e4m3", {8, 9}, "fp8"},    {"fp8-e5m2", {8, 9}, "fp8"},
      {"int8", {7, 5}, "int8"},       {"int4", {0, 0}, "weight-only"},
      {"nf4", {0, 0}, "weight-only"}, {"nf4-dq", {0, 0}, "weight-only"},
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
  if (all_digits(name)) return s;  // a byte count ("--precision 2") names no format
  const Rule& rule = find_rule(subject, name);
  const std::string family = rule.family;
  s.needs = rule.needs;
  s.native = cc >= rule.needs;
  const std::string have = "this card is " + cc.str();
  const ComputeCapability ampere{8, 0};
  if (family == "bf16") {
    if (!s.native) {
      s.reason = "bf16 needs compute capability 8.0 (Ampere) or newer; " + have +
                 ": PyTorch refuses or emulates it slowly";
      const std::string r = to_lower(name);
      s.suggestion = r == "mixed-bf16" ? "mixed-fp16 with loss scaling (a GradScaler)"
                                       : "amp-fp16 with a GradScaler (torch.cuda.amp.GradScaler)";
    }
  } else if (family == "fp8") {
    if (!s.native) {
      s.reason = "fp8 tensor cores need compute capability 8.9 (Ada) or 9.0 (Hopper); " + have;
      s.suggestion = cc >= ampere ? "bf16 (amp-bf16), or int8 weights for inference"
                                  : "amp-fp16 with a GradScaler, or int8 weights for inference";
    }
  } else if (family == "tf32") {
    if (!s.native) {
      s.reason = "TF32 tensor cores need compute capability 8.0 (Ampere); " + have;
      s.suggestion = "fp32 (same memory: TF32 is stored as fp32; only matmul speed differs)";
    }
  } else if (family == "fp16") {
    if (!s.native) {
      s.reason = "fp16 arithmetic needs compute capability 5.3; " + have;
      s.suggestion = "fp32";
    } else if (cc < ComputeCapability{7, 0}) {
      s.reason = "no tensor cores below 7.0: fp16 halves memory but is barely faster";
    }
  } else if (family == "int8") {
    if (!s.native) {
      s.reason = "int8 tensor cores need compute capability 7.5 (Turing); " + have;
      s.suggestion = "int8 weights still save memory (dequantised to fp16 per matmul, slower); or fp16";
    }
  } else if (family == "weight-only") {
    if (cc < ampere)
      s.reason =
          "weight-only: dequantised per matmul; below 8.0 use an fp16 compute dtype "
          "(bnb_4bit_compute_dtype=torch.float16), not bf16";
  }
  return s;
}

HardwareSupport hardware_support(std::string_view subject, std::string_view name,
                                 std::string_view compute_capability) {
  return hardware_support(subject, name, parse_compute_capability(subject, compute_capability));
}

}  // namespace memplan
