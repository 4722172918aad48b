// memplan plot: valid SVG (xmllint when installed), no two labels overlapping (boxes measured here
// from the SVG text, as a monospace font draws it), every GPU line labelled, and the marked points
// and bars equal to what max-batch and estimate say in --format json.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>

#include <nlohmann/json.hpp>

#include "cli_harness.hpp"

using memplan::test::run_cli;

namespace {

struct Label {
  std::string text;
  double x0, y0, x1, y1;
};

std::string attr(const std::string& tag, const std::string& name) {
  const std::regex re(" " + name + "=\"([^\"]*)\"");
  std::smatch m;
  return std::regex_search(tag, m, re) ? m[1].str() : "";
}

// Every <text> of `svg` with its box: 0.6 em per character, ascent 0.8 em, descent 0.2 em.
std::vector<Label> labels_of(const std::string& svg) {
  std::vector<Label> out;
  const std::regex re("<text([^>]*)>([^<]*)</text>");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), re); it != std::sregex_iterator(); ++it) {
    const std::string tag = (*it)[1].str();
    std::string text = (*it)[2].str();
    for (const auto& [from, to] :
         {std::pair<std::string, std::string>{"&amp;", "&"}, {"&lt;", "<"}, {"&gt;", ">"}})
      for (size_t p; (p = text.find(from)) != std::string::npos;) text.replace(p, from.size(), to);
    size_t chars = 0;
    for (unsigned char c : text) chars += (c & 0xC0) != 0x80;
    const double x = std::stod(attr(tag, "x")), y = std::stod(attr(tag, "y")),
                 size = std::stod(attr(tag, "font-size"));
    const double w = 0.6 * size * static_cast<double>(chars);
    const std::string anchor = attr(tag, "text-anchor");
    const double x0 = anchor == "middle" ? x - w / 2 : anchor == "end" ? x - w : x;
    out.push_back({text, x0, y - 0.8 * size, x0 + w, y + 0.2 * size});
  }
  return out;
}

void check_labels_apart(const std::string& svg) {
  const std::vector<Label> ls = labels_of(svg);
  REQUIRE(ls.size() > 5);
  for (size_t i = 0; i < ls.size(); ++i)
    for (size_t j = i + 1; j < ls.size(); ++j) {
      const Label &a = ls[i], &b = ls[j];
      INFO("\"" << a.text << "\" and \"" << b.text << "\"");
      CHECK_FALSE((a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1));
    }
}

bool has_label_starting(const std::string& svg, const std::string& start) {
  for (const Label& l : labels_of(svg))
    if (l.text.rfind(start, 0) == 0) return true;
  return false;
}

void check_xmllint(const std::string& svg, const std::string& name) {
  if (std::system("command -v xmllint >/dev/null 2>&1") != 0) return;  // libxml2-utils not installed
  const std::string path = "plot-" + name + ".svg";
  std::ofstream(path) << svg;
  CHECK(std::system(("xmllint --noout " + path).c_str()) == 0);
  std::remove(path.c_str());
}

}  // namespace

TEST_CASE("plot --vs batch: marks at max-batch's answers, labels apart, valid SVG", "[cli][plot]") {
  const std::vector<std::string> plan = {
      "--model",  "gpt2",        "--seq", "1024",  "--precision",
      "amp-fp16", "--optimizer", "adamw", "--gpu", "t4,rtx-4090,a100-40gb,a100-80gb"};
  std::vector<std::string> args = {"plot"};
  args.insert(args.end(), plan.begin(), plan.end());
  const auto r = run_cli(args);
  REQUIRE(r.code == 0);
  check_labels_apart(r.out);
  check_xmllint(r.out, "batch");
  std::vector<std::string> mb = {"max-batch"};
  mb.insert(mb.end(), plan.begin(), plan.end());
  mb.insert(mb.end(), {"--format", "json"});
  const auto j = nlohmann::json::parse(run_cli(mb).out);
  REQUIRE(j["results"].size() == 4);
  for (const auto& row : j["results"]) {
    const std::string gpu = row["gpu"];
    INFO(gpu);
    CHECK(has_label_starting(r.out, gpu + " "));  // the capacity line's label
    const std::regex mark("<circle[^>]* data-gpu=\"" + gpu +
                          "\" data-x=\"([0-9]+)\" data-bytes=\"([0-9]+)\"");
    std::smatch m;
    REQUIRE(std::regex_search(r.out, m, mark));
    CHECK(m[1].str() == std::to_string(row["max_micro_batch"].get<uint64_t>()));
    CHECK(m[2].str() == std::to_string(row["required_bytes"].get<uint64_t>()));
    CHECK(has_label_starting(r.out, gpu + ": " + m[1].str()));
  }
  // GPT-2 at seq 1024, amp-fp16 + AdamW: 12 on a T4, 74 on an A100 80GB (what the caching
  // allocator reserves for the step; 13 and 76 before transformers 5's DynamicCache copies of k
  // and v, which sdpa keeps, were counted).
  CHECK(j["results"][0]["max_micro_batch"] == 12);
  CHECK(j["results"][3]["max_micro_batch"] == 74);
}

TEST_CASE("plot --vs precision: each bar's terms are estimate --format json's breakdown", "[cli][plot]") {
  const auto r = run_cli({"plot", "--model", "llama-2-7b", "--seq", "2048", "--vs", "precision", "--gpu",
                          "rtx-4090,a100-80gb,h100-80gb"});
  REQUIRE(r.code == 0);
  check_labels_apart(r.out);
  check_xmllint(r.out, "precision");
  for (const std::string recipe : {"fp32", "amp-bf16", "mixed-fp16", "bf16"}) {
    const auto j = nlohmann::json::parse(run_cli({"estimate", "--model", "llama-2-7b", "--seq", "2048",
                                                  "--precision", recipe, "--format", "json"})
                                             .out);
    for (const auto& [term, bytes] : j["breakdown"].items()) {
      if (bytes.get<uint64_t>() == 0) continue;
      INFO(recipe << " " << term);
      CHECK(r.out.find("data-bar=\"" + recipe + "\" data-term=\"" + term + "\" data-bytes=\"" +
                       std::to_string(bytes.get<uint64_t>()) + "\"") != std::string::npos);
    }
  }
}

TEST_CASE("plot --vs seq with crowded GPU lines, and a bad --vs", "[cli][plot]") {
  const auto r =
      run_cli({"plot", "--model", "llama-2-7b", "--precision", "bf16", "--mode", "infer", "--batch", "8",
               "--seq", "4096", "--vs", "seq", "--gpu", "a100-40gb,a100-40gb-pcie,l40s,a100-80gb,h100-80gb"});
  REQUIRE(r.code == 0);
  check_labels_apart(r.out);
  for (const std::string gpu : {"a100-40gb", "a100-40gb-pcie", "l40s", "a100-80gb", "h100-80gb"})
    CHECK(has_label_starting(r.out, gpu + " "));
  const auto bad = run_cli({"plot", "--params", "7e9", "--vs", "time"});
  CHECK(bad.code == 2);
  CHECK(bad.err ==
        "memplan: error: --vs: \"time\" is not a chart (expected batch, seq, precision or step)\n");
}

TEST_CASE("plot --vs step: one bar per phase, the peak phase's bar is the peak bytes", "[cli][plot]") {
  const std::vector<std::string> plan = {"--model",     "gpt2",  "--seq",       "1024",
                                         "--batch",     "8",     "--precision", "amp-fp16",
                                         "--optimizer", "adamw", "--gpu",       "t4,a100-80gb"};
  std::vector<std::string> args = {"plot", "--vs", "step"};
  args.insert(args.end(), plan.begin(), plan.end());
  const auto r = run_cli(args);
  REQUIRE(r.code == 0);
  check_labels_apart(r.out);
  check_xmllint(r.out, "step");
  std::vector<std::string> est = {"estimate"};
  est.insert(est.end(), plan.begin(), plan.end());
  est.insert(est.end(), {"--format", "json"});
  const auto j = nlohmann::json::parse(run_cli(est).out);
  for (const auto& phase : j["timeline"]) {
    const std::string name = phase["phase"];
    INFO(name);
    // Each drawn segment is the JSON timeline's number for that phase.
    for (const auto& [term, key] :
         std::vector<std::pair<std::string, std::string>>{{"parameters", "weights"},
                                                          {"gradients", "gradients"},
                                                          {"optimizer_state", "optimizer_state"},
                                                          {"activations", "activations"},
                                                          {"buffers", "transient"}}) {
      const uint64_t bytes =
          phase[key].get<uint64_t>() + (key == "transient" ? phase["workspace"].get<uint64_t>() : 0);
      if (bytes == 0) continue;
      CHECK(r.out.find("data-bar=\"" + name + "\" data-term=\"" + term + "\" data-bytes=\"" +
                       std::to_string(bytes) + "\"") != std::string::npos);
    }
    if (name == j["peak_phase"]) CHECK(phase["bytes"].get<uint64_t>() == j["peak_bytes"]);
  }
  const auto no = run_cli({"plot", "--vs", "step", "--params", "7B", "--gpu", "t4"});
  CHECK(no.code == 2);
  CHECK(no.err.find("--vs: step: the step timeline needs") != std::string::npos);
}
