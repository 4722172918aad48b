#pragma once
// The consistency matrix's shared pieces: the models the repository ships (data/model_presets.json and
// tests/data/hf_configs), read here from the files themselves (not through memplan), and a runner that
// returns a command's --format json document.

#include <catch2/catch.hpp>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_harness.hpp"

namespace memplan::test {

// One model preset as data/model_presets.json states it: the published count and the architecture.
struct PresetFacts {
  std::string id;
  uint64_t parameters = 0;
  std::string torch_dtype;  // "" when the preset has no checkpoint
  nlohmann::json arch;      // null for presets without one
};

inline nlohmann::json read_json_file(const std::string& path) {
  std::ifstream f(path);
  REQUIRE(f.good());
  std::stringstream ss;
  ss << f.rdbuf();
  return nlohmann::json::parse(ss.str());
}

inline const std::vector<PresetFacts>& preset_facts() {
  static const std::vector<PresetFacts> facts = [] {
    std::vector<PresetFacts> v;
    const nlohmann::json doc = read_json_file(std::string(MEMPLAN_SOURCE_DIR) + "/data/model_presets.json");
    for (const auto& m : doc.at("models")) {
      PresetFacts p;
      p.id = m.at("id").get<std::string>();
      p.parameters = m.at("parameters").get<uint64_t>();
      p.torch_dtype = m.value("torch_dtype", std::string());
      p.arch = m.value("arch", nlohmann::json());
      v.push_back(p);
    }
    return v;
  }();
  return facts;
}

// The test configs of decoder models (tests/data/hf_configs), by file name.
inline std::string hf_config(const std::string& name) {
  return std::string(MEMPLAN_TEST_DATA_DIR) + "/hf_configs/" + name;
}

// Runs memplan with --format json appended; the exit code must be 0 or 1 (a verdict), the document parsed.
inline nlohmann::json json_of(std::vector<std::string> args) {
  args.emplace_back("--format");
  args.emplace_back("json");
  const CliResult r = run_cli(args);
  INFO("memplan " <<
       [&] {
         std::string s;
         for (const auto& a : args) s += a + " ";
         return s;
       }()
                  << "\nstderr: " << r.err);
  REQUIRE(r.code <= 1);
  return nlohmann::json::parse(r.out);
}

using Args = std::vector<std::string>;

// `a` followed by `more`.
inline Args with(Args a, const Args& more) {
  a.insert(a.end(), more.begin(), more.end());
  return a;
}

// `args` with each "--flag value" pair of `change` put in: a flag already there takes the new value.
inline std::vector<std::string> set_flags(std::vector<std::string> args,
                                          const std::vector<std::string>& change) {
  for (size_t i = 0; i + 1 < change.size(); i += 2) {
    bool found = false;
    for (size_t j = 0; j + 1 < args.size(); ++j)
      if (args[j] == change[i]) {
        args[j + 1] = change[i + 1];
        found = true;
      }
    if (!found) {
      args.push_back(change[i]);
      args.push_back(change[i + 1]);
    }
  }
  return args;
}

inline uint64_t term(const nlohmann::json& doc, const char* key) {
  const auto& b = doc.at("breakdown");
  return b.contains(key) ? b.at(key).get<uint64_t>() : 0;
}

inline uint64_t required_on(const nlohmann::json& doc, const std::string& gpu) {
  for (const auto& row : doc.at("fit"))
    if (row.at("gpu") == gpu) return row.at("required_bytes").get<uint64_t>();
  FAIL("no fit row for " << gpu);
  return 0;
}

inline std::string verdict_on(const nlohmann::json& doc, const std::string& gpu) {
  for (const auto& row : doc.at("fit"))
    if (row.at("gpu") == gpu) return row.at("verdict").get<std::string>();
  FAIL("no fit row for " << gpu);
  return "";
}

}  // namespace memplan::test
