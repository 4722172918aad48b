// The memory bar of estimate and fit (render_bar.cpp): its fill and capacity mark follow the bytes
// (checked against figures worked out by hand), its lines fit the width, ASCII or Unicode by the
// locale, colour only on a terminal and never with NO_COLOR; and advise's table fits 100 columns.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/render_bar.hpp"
#include "cli_harness.hpp"

using namespace memplan;
using memplan::test::run_cli;

namespace {

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

size_t columns(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// The line of `gpu`'s bar in `out`.
std::string bar_line(const std::string& out, const std::string& gpu) {
  for (const std::string& l : lines_of(out))
    if (l.rfind("  " + gpu + " ", 0) == 0 && l.find('[') != std::string::npos) return l;
  return "";
}

// Sets an environment variable for one scope.
struct ScopedEnv {
  std::string name;
  std::optional<std::string> old;
  ScopedEnv(const char* n, const char* value) : name(n) {
    if (const char* v = std::getenv(n)) old = v;
    if (value)
      setenv(n, value, 1);
    else
      unsetenv(n);
  }
  ~ScopedEnv() {
    if (old)
      setenv(name.c_str(), old->c_str(), 1);
    else
      unsetenv(name.c_str());
  }
};

}  // namespace

TEST_CASE("estimate --bar --ascii: fill and capacity mark where the bytes put them", "[cli][bar]") {
  // 7e9 fp16 weights + each GPU's CUDA context on a T4 (15,109 MiB = 15,842,934,784 B usable) and an
  // A100 80GB (81,920 - 926 = 80,994 MiB = 84,928,364,544 B): the A100 sets the scale. Contexts: 1 KiB x
  // 1,024 threads x 40 SMs + 441,253,888 B = 483,196,928 B on the T4; 1 KiB x 2,048 x 108 + 441,253,888
  // = 667,746,304 B on the A100.
  const std::vector<std::string> args = {"estimate", "--params", "7e9",   "--precision",  "fp16",
                                         "--mode",   "infer",    "--gpu", "t4,a100-80gb", "--bar",
                                         "--ascii",  "--width",  "80"};
  const auto r = run_cli(args);
  REQUIRE(r.code == 0);
  for (const std::string& l : lines_of(r.out.substr(r.out.find("# parameters")))) CHECK(columns(l) <= 80);
  const double scale = 84928364544.0;
  struct Row {
    std::string gpu;
    double memory, required;
    const char* shown;
  };
  for (const auto& [gpu, memory, required, shown] :
       {Row{"t4", 15842934784.0, 14483196928.0, "] 13.5 GiB of "},
        Row{"a100-80gb", scale, 14667746304.0, "] 13.7 GiB of "}}) {
    const std::string line = bar_line(r.out, gpu);
    INFO(line);
    REQUIRE(!line.empty());
    const std::string inside = line.substr(line.find('[') + 1, line.rfind(']') - line.find('[') - 1);
    const size_t marker = inside.find('|');
    REQUIRE(marker != std::string::npos);
    std::string cells = inside;
    cells.erase(marker, 1);
    const double n = static_cast<double>(cells.size());
    const size_t filled = cells.find_first_of('.') == std::string::npos ? cells.size() : cells.find('.');
    CHECK(std::abs(static_cast<double>(filled) - required / scale * n) <= 1.0);
    CHECK(std::abs(static_cast<double>(marker) - memory / scale * n) <= 0.5);
    // 14,483,196,928 B = 13.49 GiB, 14,667,746,304 B = 13.66 GiB; the memory as the table prints it.
    CHECK(line.find(shown) != std::string::npos);
  }
  // The same numbers as --format json.
  auto json_args = args;
  json_args.resize(9);
  json_args.insert(json_args.end(), {"--format", "json"});
  const auto j = nlohmann::json::parse(run_cli(json_args).out);
  CHECK(j["required_bytes"] == 14667746304ull);  // the breakdown counts the larger context, the A100's
  CHECK(j["fit"][0]["required_bytes"] == 14483196928ull);
  CHECK(j["fit"][1]["required_bytes"] == 14667746304ull);
  CHECK(j["fit"][0]["memory_bytes"] == 15842934784ull);
  CHECK(j["fit"][1]["memory_bytes"] == 84928364544ull);
}

TEST_CASE("the bar: not in piped output unless asked, --no-bar, bad --width", "[cli][bar]") {
  const auto plain = run_cli({"estimate", "--params", "7e9", "--gpu", "t4"});
  CHECK(plain.out.find(" [") == std::string::npos);
  std::ostringstream out, err;
  {
    ScopedEnv no_color("NO_COLOR", nullptr);
    CHECK(cli::run({"estimate", "--params", "7e9", "--gpu", "t4"}, out, err, true) == 0);
    CHECK(bar_line(out.str(), "t4").find("\033[") != std::string::npos);  // a terminal: colour
  }
  {
    ScopedEnv no_color("NO_COLOR", "1");
    std::ostringstream o2, e2;
    CHECK(cli::run({"estimate", "--params", "7e9", "--gpu", "t4"}, o2, e2, true) == 0);
    CHECK(!bar_line(o2.str(), "t4").empty());
    CHECK(o2.str().find("\033[") == std::string::npos);
    std::ostringstream o3, e3;
    CHECK(cli::run({"estimate", "--params", "7e9", "--gpu", "t4", "--no-bar"}, o3, e3, true) == 0);
    CHECK(bar_line(o3.str(), "t4").empty());
  }
  const auto bad = run_cli({"estimate", "--params", "7e9", "--bar", "--width", "12"});
  CHECK(bad.code == 2);
  CHECK(bad.err ==
        "memplan: error: --width: \"12\" is not a width (expected a number of columns from 40 to 1000)\n");
  CHECK(run_cli({"estimate", "--params", "7e9", "--bar", "--no-bar"}).code == 2);
}

TEST_CASE("the bar: Unicode by the locale, eighth-blocks at the end of the fill, COLUMNS", "[cli][bar]") {
  CHECK(cli::locale_is_utf8("en_US.UTF-8"));
  CHECK(cli::locale_is_utf8("C.utf8"));
  CHECK_FALSE(cli::locale_is_utf8("C"));
  CHECK_FALSE(cli::locale_is_utf8("POSIX"));
  ScopedEnv all("LC_ALL", "C.UTF-8");
  ScopedEnv cols("COLUMNS", "60");
  const auto r =
      run_cli({"fit", "--params", "7e9", "--precision", "fp16", "--mode", "infer", "--gpu", "t4", "--bar"});
  CHECK(r.code == 0);
  const std::string line = bar_line(r.out, "t4");
  INFO(r.out);
  CHECK(columns(line) <= 60);
  CHECK(line.find("\u2588") != std::string::npos);  // parameters: full blocks
  CHECK(line.find("\u2502") != std::string::npos);  // the capacity mark
  ScopedEnv c_locale("LC_ALL", "C");
  CHECK(bar_line(run_cli({"fit", "--params", "7e9", "--gpu", "t4", "--bar"}).out, "t4").find('#') !=
        std::string::npos);
}

TEST_CASE("advise: the text table fits 100 columns", "[cli][advise][bar][many-runs]") {
  const auto r = run_cli({"advise", "--model", "llama-2-7b", "--precision", "fp32", "--optimizer", "adamw",
                          "--batch", "16", "--seq", "2048", "--gpu", "rtx-4090"});
  CHECK(r.code != 2);
  for (const std::string& l : lines_of(r.out)) {
    INFO(l);
    CHECK(columns(l) <= 100);
  }
  CHECK(r.out.find("cost: ") != std::string::npos);
}
