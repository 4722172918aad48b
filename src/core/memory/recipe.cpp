#include <memplan/recipe.hpp>

#include <cctype>

#include <memplan/error.hpp>
#include <memplan/quantity.hpp>
#include "core/base/did_you_mean.hpp"

namespace memplan {
namespace {

TermFormat fmt(const char* name) { return {name, find_storage_format("recipe", name).cost}; }
const TermFormat k_no_format{"none", {0, 1}};

Recipe uniform(const std::string& name, const TermFormat& f, const std::string& hw, bool scaler) {
  Recipe r;
  r.name = name;
  r.weights = r.gradients = r.optimizer_state = r.activations = f;
  r.master = k_no_format;
  r.hardware_format = hw;
  r.loss_scaler = scaler;
  r.description = "every term in " + f.name;
  return r;
}

Recipe amp(const std::string& name, const char* half) {
  Recipe r = uniform(name, fmt("fp32"), half, std::string(half) == "fp16");
  r.activations = fmt(half);
  r.autocast = true;
  r.description =
      std::string("torch.autocast: fp32 weights, gradients and optimizer state; activations in ") + half;
  return r;
}

Recipe mixed(const std::string& name, const char* half) {
  Recipe r = uniform(name, fmt(half), half, std::string(half) == "fp16");
  r.master = fmt("fp32");
  r.optimizer_state = fmt("fp32");
  r.description = std::string("master-weight mixed precision: ") + half +
                  " weights and gradients, fp32 master copy and fp32 optimizer state";
  return r;
}

}  // namespace

std::vector<std::string> recipe_names() {
  return {"fp32", "fp16", "bf16", "amp-fp16", "amp-bf16", "mixed-fp16", "mixed-bf16"};
}

Recipe parse_recipe(std::string_view subject, std::string_view text) {
  const std::string t(text);
  if (t == "fp32" || t == "float32") return uniform("fp32", fmt("fp32"), "", false);
  if (t == "fp16" || t == "float16" || t == "half") return uniform("fp16", fmt("fp16"), "fp16", true);
  if (t == "bf16" || t == "bfloat16") return uniform("bf16", fmt("bf16"), "bf16", false);
  if (t == "amp-fp16") return amp(t, "fp16");
  if (t == "amp-bf16") return amp(t, "bf16");
  if (t == "mixed-fp16") return mixed(t, "fp16");
  if (t == "mixed-bf16") return mixed(t, "bf16");
  if (!t.empty() && (std::isdigit(static_cast<unsigned char>(t[0])) || t[0] == '.' || t[0] == '-')) {
    // A bare number of bytes per number, as the lesson's estimator takes it: 4, 2, 1, 0.5.
    double v = 0;
    try {
      v = parse_real(subject, t);
    } catch (const Error&) {
      throw Error(
          std::string(subject),
          "\"" + t + "\" is not a precision (expected " +
              "fp32, fp16, bf16, amp-fp16, amp-bf16, mixed-fp16, mixed-bf16 or bytes per number, e.g. 2)");
    }
    if (!(v > 0 && v <= 16))
      throw Error(std::string(subject),
                  "\"" + t + "\" bytes per number is out of range (expected 0.5 to 16)");
    // Exact in sixteenths of a byte (covers 0.5, 0.5625, 1, 2, 4, 8).
    const uint64_t num = static_cast<uint64_t>(v * 16 + 0.5);
    if (num == 0 || static_cast<double>(num) / 16.0 != v)
      throw Error(std::string(subject),
                  "\"" + t + "\" bytes per number must be a multiple of 1/16 (e.g. 4, 2, 1, 0.5)");
    TermFormat f{t + " B", {num, 16}};
    return uniform(t, f, "", false);
  }
  throw Error(std::string(subject), "\"" + t +
                                        "\" is not a precision (expected fp32, fp16, bf16, amp-fp16, "
                                        "amp-bf16, mixed-fp16, mixed-bf16 or bytes per number" +
                                        did_you_mean(t, recipe_names()) + ")");
}

}  // namespace memplan
