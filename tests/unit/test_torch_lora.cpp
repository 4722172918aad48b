// The activation ledger under LoRA (frozen base weights, trainable adapters) against bytes
// measured with real PyTorch (tests/data/torch_cpu_lora.json: torch 1.13 on CPU,
// saved_tensors_hooks; bench/measure_lora.py). Every measurement with batch > 1 must match to the
// byte; batch 1 within 10% (torch aliases storages there), as docs/accuracy.md states.

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "torch_reference_arch.hpp"

#include <memplan/lora.hpp>
#include "core/memory/activations.hpp"

using namespace memplan;
using nlohmann::json;

namespace {

using memplan::test::arch_from;

const json& lora_doc() {
  static const json doc = [] {
    std::ifstream in(std::string(MEMPLAN_TEST_DATA_DIR) + "/torch_cpu_lora.json");
    REQUIRE(in.good());
    return json::parse(in);
  }();
  return doc;
}

LoraTargets targets_of(const json& c) {
  std::string list;
  for (const json& n : c.at("lora_targets")) list += (list.empty() ? "" : ",") + n.get<std::string>();
  return parse_lora_targets("--lora-targets", list, c.at("lora_rank"));
}

ActivationOptions options_for(const json& c, const json& m) {
  ActivationOptions o;
  o.batch = m.at("batch_size");
  o.seq = m.at("seq_len");
  o.runtime = Runtime::cpu_torch113;
  o.attention = Attention::eager;
  const bool amp = m.at("precision") == "autocast_bf16";
  o.autocast = amp;
  o.act_cost = amp ? ElementCost{2, 1} : ElementCost{4, 1};
  o.act_format = amp ? "bf16" : "fp32";
  o.lora = targets_of(c);
  return o;
}

// The model phase plus cross-entropy's log-softmax (every case is a causal LM).
uint64_t measured(const json& m) {
  return m.at("activation_bytes").get<uint64_t>() + m.at("loss_activation_bytes").get<uint64_t>();
}

uint64_t predicted(const json& c, const json& m) {
  const ActivationOptions o = options_for(c, m);
  return o.batch * transformer_activations(arch_from(c.at("arch")), o).saved_bytes_per_sample;
}

}  // namespace

TEST_CASE("lora reference: every case is present", "[torch_lora]") {
  const json& cases = lora_doc().at("cases");
  REQUIRE(cases.size() == 3);
  for (const json& c : cases) CHECK(c.at("activations").size() == 12);  // 2 seq x 2 precisions x 3 batches
}

TEST_CASE("lora reference: trainable parameters are the adapters", "[torch_lora]") {
  for (const json& c : lora_doc().at("cases")) {
    INFO(c.at("id").get<std::string>());
    ModelSpec m;
    m.arch = arch_from(c.at("arch"));
    CHECK(lora_adapters(m, targets_of(c)).parameters == c.at("trainable_params").get<uint64_t>());
  }
}

TEST_CASE("lora reference: batch > 1 reproduced to the byte, batch 1 within 10%", "[torch_lora]") {
  for (const json& c : lora_doc().at("cases"))
    for (const json& m : c.at("activations")) {
      const uint64_t batch = m.at("batch_size");
      INFO(c.at("id").get<std::string>()
           << " " << m.at("precision").get<std::string>() << " B=" << batch << " T=" << m.at("seq_len"));
      const uint64_t p = predicted(c, m), meas = measured(m);
      if (batch > 1)
        CHECK(p == meas);
      else
        CHECK(std::fabs(double(p) - double(meas)) <= 0.10 * double(meas));
    }
}

TEST_CASE("lora reference: autocast's weight copies (frozen and adapter) match exactly", "[torch_lora]") {
  for (const json& c : lora_doc().at("cases"))
    for (const json& m : c.at("activations")) {
      INFO(c.at("id").get<std::string>() << " " << m.at("precision").get<std::string>());
      const ActivationOptions o = options_for(c, m);
      const uint64_t fixed = transformer_activations(arch_from(c.at("arch")), o).fixed_bytes;
      CHECK(fixed ==
            m.at("param_cast_bytes").get<uint64_t>() + m.at("frozen_weight_cast_bytes").get<uint64_t>());
    }
}

TEST_CASE("lora: fewer saved bytes than a full fine-tune, without LoRA nothing changes", "[torch_lora]") {
  const json& c = lora_doc().at("cases").at(0);
  const json& m = c.at("activations").at(1);
  ActivationOptions o = options_for(c, m);
  const TransformerArch a = arch_from(c.at("arch"));
  const uint64_t with = transformer_activations(a, o).total_bytes;
  o.lora.reset();
  const uint64_t without = transformer_activations(a, o).total_bytes;
  CHECK(with < without);
}

TEST_CASE("lora: accuracy table for docs/accuracy.md", "[.accuracy]") {
  std::printf("| case | precision / seq | batch | measured B/row | memplan B/row | error | error at B=1 |\n");
  std::printf("|---|---|---:|---:|---:|---:|---:|\n");
  for (const json& c : lora_doc().at("cases")) {
    std::map<std::string, const json*> b1, top;
    for (const json& m : c.at("activations")) {
      const std::string key = m.at("precision").get<std::string>() + " / " + m.at("seq_len").dump();
      if (m.at("batch_size") == 1) b1[key] = &m;
      if (!top.count(key) || top[key]->at("batch_size") < m.at("batch_size")) top[key] = &m;
    }
    for (const auto& [key, m] : top) {
      const uint64_t batch = m->at("batch_size");
      const double meas = double(measured(*m)) / double(batch),
                   pred = double(predicted(c, *m)) / double(batch);
      const double m1 = double(measured(*b1.at(key))), p1 = double(predicted(c, *b1.at(key)));
      std::printf("| %s | %s | %llu | %.0f | %.0f | %+.2f%% | %+.2f%% |\n",
                  c.at("id").get<std::string>().c_str(), key.c_str(), static_cast<unsigned long long>(batch),
                  meas, pred, 100.0 * (pred - meas) / meas, 100.0 * (p1 - m1) / m1);
    }
  }
}
