// The one file reader (core/base/file_reader, core/base/json_text): regular files only, a size
// limit per use, a nesting limit and line/column for JSON - for the library and for every command
// that opens a file (issue 13: a FIFO blocked forever, /dev/zero read until memory ran out,
// 20,000-deep arrays in a plan file crashed with a stack overflow).
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <string>

#include <memplan/error.hpp>
#include "core/base/file_reader.hpp"
#include "core/base/json_text.hpp"

#include "../cli/cli_harness.hpp"
#include "error_of.hpp"
#include "model_file_builders.hpp"

using namespace memplan;
using memplan::test::error_of;
using memplan::test::line_count;
using memplan::test::run_cli;
using memplan::test::TempDir;

namespace {

// A FIFO in `dir`; opening it for reading would block until a writer came, which none will.
std::string make_fifo(const TempDir& dir) {
  const std::string path = dir.file("fifo");
  REQUIRE(::mkfifo(path.c_str(), 0600) == 0);
  return path;
}

// One stderr line "memplan: error: ..." holding `fragment`, exit 2, nothing on stdout.
void expect_refused(const std::vector<std::string>& args, const std::string& fragment) {
  std::string cmd;
  for (const std::string& a : args) cmd += a + " ";
  INFO("memplan " << cmd);
  const auto r = run_cli(args);
  INFO("stderr: " << r.err);
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK(line_count(r.err) == 1);
  CHECK(r.err.rfind("memplan: error: ", 0) == 0);
  CHECK(r.err.find(fragment) != std::string::npos);
}

}  // namespace

TEST_CASE("the file reader refuses a FIFO without blocking", "[file_reader]") {
  TempDir dir("reader_fifo");
  const std::string fifo = make_fifo(dir);
  CHECK(error_of([&] { read_small_file(fifo, 1000); }) ==
        fifo + ": is not a regular file (a FIFO, device or socket)");
  CHECK(error_of([&] { read_file_prefix(fifo, 8); }).find("is not a regular file") != std::string::npos);
  CHECK(error_of([&] { read_small_file(fifo, 1000, "--plan"); }) ==
        "--plan: cannot read \"" + fifo + "\": is not a regular file (a FIFO, device or socket)");
}

TEST_CASE("the file reader refuses /dev/zero and directories", "[file_reader]") {
  CHECK(error_of([] { read_small_file("/dev/zero", 1000); }).find("/dev/zero: is not a regular file") == 0);
  CHECK(error_of([] { file_size("/dev/zero"); }).find("is not a regular file") != std::string::npos);
  TempDir dir("reader_dir");
  CHECK(error_of([&] { read_small_file(dir.path.string(), 1000); }) ==
        dir.path.string() + ": is a directory (expected a file)");
  CHECK(error_of([] { read_small_file("/nonexistent/x.json", 1000); }) ==
        "/nonexistent/x.json: no such file");
  CHECK(error_of([] { read_small_file("", 1000); }) == "\"\": the path is empty");
}

TEST_CASE("the file reader enforces the limit it is given", "[file_reader]") {
  TempDir dir("reader_limit");
  const std::string f = dir.write("ten.txt", "0123456789");
  CHECK(read_small_file(f, 10) == "0123456789");
  CHECK(error_of([&] { read_small_file(f, 9); }) ==
        f + ": is 10 bytes, more than the 9 bytes memplan reads from such a file");
  CHECK(read_file_prefix(f, 4) == "0123");
  CHECK(read_file_prefix(f, 100) == "0123456789");
  CHECK(file_size(f) == 10);
}

TEST_CASE("JSON files: depth limit, NUL bytes, line and column, printable errors", "[file_reader][json]") {
  using memplan::detail::parse_json_text;
  using memplan::detail::read_json_file;
  TempDir dir("reader_json");
  const std::string deep = dir.write("deep.json", std::string(20000, '[') + std::string(20000, ']'));
  CHECK(error_of([&] { read_json_file(deep, 1u << 20, "the plan"); }) ==
        deep + ": the plan nests deeper than 64 levels");
  const std::string bad = dir.write("bad.json", "{\n  \"batch\": 4,\n  \"seq\": x\n}\n");
  CHECK(error_of([&] {
          read_json_file(bad, 1u << 20, "the plan");
        }).find(bad + ": the plan is not valid JSON (parse error at line 3, column 10:") == 0);
  CHECK(error_of([] { parse_json_text(std::string("{\"a\":\n 1\0}", 10), "c.json", "the config"); }) ==
        "c.json: the config has a NUL byte at line 2, column 3 (not a text file?)");
  // A raw 0xFF byte is shown as \xFF, never echoed to the terminal.
  const std::string e = error_of([] { parse_json_text("\xff", "c.json", "the config"); });
  CHECK(e.find('\xff') == std::string::npos);
  CHECK(e.find("\\xFF") != std::string::npos);
  CHECK(parse_json_text(R"({"a": {"x": [1, {"y": 2}]}, "b": [3]})", "h", "the header")["a"]["x"][1]["y"] ==
        2);
}

TEST_CASE("issue 32: duplicate JSON keys are refused at any depth, naming the key, the file and where",
          "[file_reader][json]") {
  using memplan::detail::parse_json_text;
  CHECK(error_of([] { parse_json_text(R"({"b": 1, "a": 2, "a": 3})", "h", "the header"); }) ==
        "h: the header has the key \"a\" twice");
  CHECK(error_of([] { parse_json_text(R"({"a": {"x": 1, "x": 2}, "b": 1, "a": 3})", "h", "the header"); }) ==
        "h: the header has the key \"x\" twice (in a)");
  CHECK(error_of([] { parse_json_text(R"({"fit": [{}, {"gpu": 1, "gpu": 2}]})", "d.json", "the input"); }) ==
        "d.json: the input has the key \"gpu\" twice (in fit[1])");
  // The same key in two sibling objects, or in an object and its child, is no repetition.
  CHECK(parse_json_text(R"({"a": {"a": 1}, "b": [{"a": 2}, {"a": 3}]})", "h", "x")["b"][1]["a"] == 3);
  // A key shown escaped and cut: the error stays one short printable line.
  const std::string key(5000, '\x1b');
  const std::string e =
      error_of([&] { parse_json_text("{\"" + key + "\": 1, \"" + key + "\": 2}", "h", "x"); });
  CHECK(e.find('\x1b') == std::string::npos);
  CHECK(e.size() < 600);
  // Linear: 200,000 distinct keys in one object.
  std::string big = "{";
  for (int i = 0; i < 200000; ++i) big += (i ? ",\"k" : "\"k") + std::to_string(i) + "\":1";
  big += "}";
  CHECK(parse_json_text(big, "h", "x").size() == 200000);
}

TEST_CASE("every command that opens a file refuses a FIFO, /dev/zero and a directory", "[file_reader][cli]") {
  TempDir dir("reader_cli");
  const std::string fifo = make_fifo(dir);
  const std::string folder = dir.path.string();
  for (const std::string& bad : {fifo, std::string("/dev/zero")}) {
    expect_refused({"estimate", "--params", "7B", "--plan", bad}, "is not a regular file");
    expect_refused({"estimate", "--params", "7B", "--presets", bad}, "is not a regular file");
    expect_refused({"scale", "--to", "fp16", "--values", bad}, "is not a regular file");
    expect_refused({"estimate", "--config", bad}, "is not a regular file");
    expect_refused({"inspect", bad}, "is not a regular file");
  }
  expect_refused({"estimate", "--params", "7B", "--plan", folder}, "is a directory");
  expect_refused({"scale", "--to", "fp16", "--values", folder}, "is a directory");
}

TEST_CASE("a plan file nesting 20,000 arrays deep is one clear error, not a crash", "[file_reader][cli]") {
  TempDir dir("reader_plan");
  const std::string deep =
      dir.write("deep.json", "{\"batch\": " + std::string(20000, '[') + std::string(20000, ']') + "}");
  expect_refused({"estimate", "--params", "7B", "--plan", deep},
                 deep + ": the plan nests deeper than 64 levels");
  const std::string big = dir.write("big.json", "{\"batch\": 1" + std::string(2u << 20, ' ') + "}");
  expect_refused({"estimate", "--params", "7B", "--plan", big}, "more than the 1,048,576 bytes");
  const std::string bad = dir.write("bad.json", "{\"batch\": 1,\n \"seq\": }");
  expect_refused({"estimate", "--params", "7B", "--plan", bad}, "parse error at line 2, column 9");
}
