// Golden CLI output: each tests/golden/*.txt starts with "$ memplan ARGS" (and optionally a
// line "# exit N"), followed by the exact stdout. MEMPLAN_UPDATE_GOLDEN=1 rewrites them;
// review the diff before committing.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli_harness.hpp"

namespace fs = std::filesystem;
using memplan::test::run_cli;

namespace {

std::vector<std::string> split_args(const std::string& line) {
  std::vector<std::string> args;
  std::istringstream ss(line);
  std::string a;
  while (ss >> a) args.push_back(a);
  return args;
}

}  // namespace

TEST_CASE("golden CLI output", "[cli][golden][many-runs]") {
  const fs::path dir = fs::path(MEMPLAN_SOURCE_DIR) / "tests" / "golden";
  const bool update = std::getenv("MEMPLAN_UPDATE_GOLDEN") != nullptr;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.path().extension() == ".txt") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() >= 8);
  for (const fs::path& file : files) {
    std::ifstream in(file);
    std::string command, line, expected;
    std::getline(in, command);
    REQUIRE(command.rfind("$ memplan ", 0) == 0);
    int expected_code = 0;
    std::streampos body = in.tellg();
    if (std::getline(in, line) && line.rfind("# exit ", 0) == 0)
      expected_code = std::atoi(line.c_str() + 7);
    else
      in.seekg(body);
    std::ostringstream rest;
    rest << in.rdbuf();
    expected = rest.str();
    auto r = run_cli(split_args(command.substr(10)));
    INFO(file.filename().string() << ": " << command << "\nstderr: " << r.err);
    if (update) {
      std::ofstream out(file);
      out << command << "\n";
      if (r.code != 0) out << "# exit " << r.code << "\n";
      out << r.out;
      continue;
    }
    CHECK(r.code == expected_code);
    CHECK(r.out == expected);
  }
}
