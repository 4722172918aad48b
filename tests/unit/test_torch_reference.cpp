// memplan's activation ledger, parameter counter and optimizer arithmetic against bytes measured
// with real PyTorch (tests/data/torch_cpu_reference.json: torch 1.13 on CPU, saved_tensors_hooks;
// measured by tests/data/torch_reference/measure.py, trimmed by bench/measure_activations.py
// compact, every case kept).
//
// Parameters, gradients and optimizer state must match exactly; activations within 5% for every
// batch > 1 (B = 1 lets torch alias storages it copies at B > 1, so it gets the 10% measure.py
// allows); autocast's batch-independent weight copies exactly.
//
// `memplan_tests "[.accuracy]"` prints the per-case error table that docs/accuracy.md holds.

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "torch_reference_arch.hpp"

#include "core/base/checked.hpp"
#include "core/memory/activations.hpp"
#include "core/models/parameter_count.hpp"

using namespace memplan;
using nlohmann::json;

namespace {

using memplan::test::arch_from;

json load(const char* name) {
  std::ifstream in(std::string(MEMPLAN_TEST_DATA_DIR) + "/" + name);
  REQUIRE(in.good());
  return json::parse(in);
}

// The measure.py reference: MLPs, torch encoder layers, GPT-2 style, LLaMA block.
const json& torch_reference_json() {
  static const json doc = load("torch_cpu_reference.json");
  return doc;
}

// bench/measure_activations.py builtin: GPT-2 style, LLaMA with GQA + RoPE + embeddings + head,
// BERT style (post-LN, embedding norm, dropout), Falcon style (parallel attention, fused qkv).
const json& builtin() {
  static const json doc = load("torch_cpu_builtin.json");
  return doc;
}

std::vector<uint64_t> widths_of(const json& a) { return a.at("mlp_widths").get<std::vector<uint64_t>>(); }

struct Prediction {
  uint64_t activation = 0;  // what the model and loss phases' "activation" category should hold
  uint64_t fixed = 0;       // autocast weight copies
};

// memplan's numbers for one measurement of a case.
Prediction predict(const json& c, const json& m) {
  const json& a = c.at("arch");
  ActivationOptions o;
  o.batch = m.at("batch_size");
  o.runtime = Runtime::cpu_torch113;
  bool amp = m.at("precision") == "autocast_bf16";
  o.autocast = amp;
  o.act_cost = amp ? ElementCost{2, 1} : ElementCost{4, 1};
  o.act_format = amp ? "bf16" : "fp32";
  if (a.contains("mlp_widths")) {
    ActivationLedger l = mlp_activations(widths_of(a), o);
    return {l.total_bytes, l.fixed_bytes};
  }
  TransformerArch t = arch_from(a);
  o.seq = m.at("seq_len");
  o.attention = a.value("attention", std::string("eager")) == "sdpa" ? Attention::sdpa : Attention::eager;
  o.dropout = t.hidden_dropout > 0.0 || t.attention_dropout > 0.0;
  ActivationLedger l = transformer_activations(t, o);
  return {checked_mul(o.batch, l.saved_bytes_per_sample), l.fixed_bytes};
}

uint64_t measured_activation(const json& c, const json& m) {
  // The loss phase is part of the ledger only for causal LMs (cross-entropy over the vocabulary);
  // the stacks' stand-in loss (out.float().pow(2).mean()) and the MLP's loss are not.
  uint64_t v = m.at("activation_bytes");
  const json& a = c.at("arch");
  if (a.value("vocab", uint64_t{0}) > 0 && a.value("causal", true))
    v += m.at("loss_activation_bytes").get<uint64_t>();
  return v;
}

double rel_error(uint64_t predicted, uint64_t measured) {
  return (double(predicted) - double(measured)) / double(measured);
}

}  // namespace

TEST_CASE("reference: every case is present", "[torch_reference]") {
  const json& cases = torch_reference_json().at("cases");
  CHECK(cases.size() == 17);
  size_t measurements = 0;
  for (const json& c : cases) measurements += c.at("activations").size();
  CHECK(measurements == 4 * 6 + 8 * 12 + 4 * 6 + 6);
}

TEST_CASE("reference: parameters, gradients and optimizer state match exactly", "[torch_reference]") {
  for (const json& c : torch_reference_json().at("cases")) {
    INFO(c.at("id").get<std::string>());
    const json& p = c.at("params");
    const json& a = c.at("arch");
    uint64_t count = 0, tensors = 0;
    if (a.contains("mlp_widths")) {
      std::vector<uint64_t> w = widths_of(a);
      for (size_t i = 0; i + 1 < w.size(); ++i) count += w[i] * w[i + 1] + w[i + 1];  // weight + bias
      tensors = 2 * (w.size() - 1);
    } else {
      ParameterCount b = count_parameters(arch_from(a));
      count = b.total;
      tensors = b.tensors;
    }
    CHECK(p.at("count") == count);
    CHECK(p.at("tensors") == tensors);
    CHECK(p.at("bytes") == 4 * count);  // fp32 weights, also under autocast
    // Gradients: fp32, one per parameter, with or without autocast.
    for (const auto& [prec, g] : c.at("grads").items()) {
      INFO(prec);
      CHECK(g.at("bytes") == 4 * count);
      CHECK(g.at("tensors") == tensors);
      CHECK(g.at("dtypes") == json::array({"float32"}));
    }
    const json& o = c.at("optimizers");
    CHECK(o.at("SGD").at("state_bytes_total") == 0);
    CHECK(o.at("SGD_momentum0.9").at("state_bytes_total") == 4 * count);  // one fp32 copy, no step
    CHECK(o.at("SGD_momentum0.9").at("step_bytes") == 0);
    for (const char* adam : {"Adam", "AdamW"}) {
      INFO(adam);
      const json& s = o.at(adam);
      // Two fp32 copies (exp_avg, exp_avg_sq) plus a 0-dim float32 `step` per parameter tensor.
      CHECK(s.at("by_key").at("exp_avg") == 4 * count);
      CHECK(s.at("by_key").at("exp_avg_sq") == 4 * count);
      CHECK(s.at("step_bytes") == 4 * tensors);
      CHECK(s.at("step_dtypes") == json::array({"float32"}));
      CHECK(s.at("state_bytes_total") == 2 * 4 * count + 4 * tensors);
    }
  }
}

TEST_CASE("reference: activation bytes within 5% per case, weight copies exact", "[torch_reference]") {
  for (const json& c : torch_reference_json().at("cases")) {
    for (const json& m : c.at("activations")) {
      uint64_t batch = m.at("batch_size");
      INFO(c.at("id").get<std::string>()
           << " " << m.at("precision").get<std::string>() << " B=" << batch << " T=" << m.at("seq_len"));
      Prediction p = predict(c, m);
      uint64_t measured = measured_activation(c, m);
      double err = std::fabs(rel_error(p.activation, measured));
      CHECK(err <= (batch > 1 ? 0.05 : 0.10));
      CHECK(p.fixed == m.at("param_cast_bytes").get<uint64_t>());
    }
  }
}

TEST_CASE("reference: batch > 1 is reproduced to the byte", "[torch_reference]") {
  // Stronger than the 5% contract: the ledger is meant to be exact where torch copies storages.
  for (const json& c : torch_reference_json().at("cases"))
    for (const json& m : c.at("activations")) {
      if (m.at("batch_size") == 1) continue;
      INFO(c.at("id").get<std::string>() << " " << m.at("precision").get<std::string>()
                                         << " B=" << m.at("batch_size") << " T=" << m.at("seq_len"));
      CHECK(predict(c, m).activation == measured_activation(c, m));
    }
}

TEST_CASE("reference: measured linearity holds and the ledger is exactly linear", "[torch_reference]") {
  for (const json& c : torch_reference_json().at("cases")) {
    std::map<std::string, std::map<uint64_t, uint64_t>> by;  // precision/seq -> batch -> bytes
    for (const json& m : c.at("activations"))
      by[m.at("precision").get<std::string>() + "/" + m.at("seq_len").dump()][m.at("batch_size")] =
          measured_activation(c, m);
    for (const auto& [key, series] : by) {
      INFO(c.at("id").get<std::string>() << " " << key);
      CHECK(series.at(256) * 32 == series.at(32) * 256);  // torch: exactly proportional for B > 1
    }
    const json& m = c.at("activations").at(0);
    json m1 = m, m7 = m;
    m1["batch_size"] = 1;
    m7["batch_size"] = 7;
    CHECK(predict(c, m7).activation == 7 * predict(c, m1).activation);
  }
}

TEST_CASE("builtin architectures: activation bytes within 5% for batch > 1", "[torch_reference]") {
  for (const json& c : builtin().at("cases")) {
    const json& a = c.at("arch");
    ParameterCount b = count_parameters(arch_from(a));
    CHECK(c.at("params").at("count") == b.total);
    CHECK(c.at("params").at("tensors") == b.tensors);
    for (const json& m : c.at("activations")) {
      uint64_t batch = m.at("batch_size");
      INFO(c.at("id").get<std::string>() << " " << m.at("precision").get<std::string>() << " B=" << batch);
      Prediction p = predict(c, m);
      uint64_t measured = measured_activation(c, m);
      CHECK(std::fabs(rel_error(p.activation, measured)) <= (batch > 1 ? 0.05 : 0.10));
      CHECK(p.fixed == m.at("param_cast_bytes").get<uint64_t>());
    }
  }
}

TEST_CASE("reference: accuracy table for docs/accuracy.md", "[.accuracy]") {
  std::printf("| case | precision | seq | batch | measured bytes/row | memplan | error | error at B=1 |\n");
  std::printf("|---|---|---|---:|---:|---:|---:|---:|\n");
  for (const json* doc : {&torch_reference_json(), &builtin()})
    for (const json& c : doc->at("cases")) {
      std::map<std::string, const json*> b1, top;
      for (const json& m : c.at("activations")) {
        std::string key = m.at("precision").get<std::string>() + " | " + m.at("seq_len").dump();
        if (m.at("batch_size") == 1) b1[key] = &m;
        if (!top.count(key) || top[key]->at("batch_size") < m.at("batch_size")) top[key] = &m;
      }
      for (const auto& [key, m] : top) {
        const json& one = *b1.at(key);
        uint64_t batch = m->at("batch_size");
        uint64_t meas = measured_activation(c, *m) / batch, pred = predict(c, *m).activation / batch;
        std::printf("| %s | %s | %llu | %llu | %llu | %+.2f%% | %+.2f%% |\n",
                    c.at("id").get<std::string>().c_str(), key.c_str(),
                    static_cast<unsigned long long>(batch), static_cast<unsigned long long>(meas),
                    static_cast<unsigned long long>(pred), 100.0 * rel_error(pred, meas),
                    100.0 * rel_error(predict(c, one).activation, measured_activation(c, one)));
      }
    }
}
