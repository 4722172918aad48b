// The unclear messages of issue 13 item 8, each one line on stderr, exit 2, nothing on stdout, and
// the silent assumptions of item 9 said out loud.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "cli_harness.hpp"

using memplan::test::line_count;
using memplan::test::run_cli;

namespace {

// Runs `args`, checks the error contract, returns the stderr line.
std::string message_error_line(const std::vector<std::string>& args) {
  const auto r = run_cli(args);
  INFO(r.err);
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK(line_count(r.err) == 1);
  CHECK(r.err.rfind("memplan: error: ", 0) == 0);
  return r.err;
}

std::string temp_dir(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("memplan_messages_" + name);
  std::filesystem::create_directories(dir);
  return dir.string();
}

}  // namespace

TEST_CASE("messages: an empty command is named as such", "[cli][errors][messages]") {
  const std::string e = message_error_line({""});
  CHECK(e.rfind("memplan: error: \"\" is not a command (expected one of: estimate, fit,", 0) == 0);
}

TEST_CASE("messages: an empty --config path names the option", "[cli][errors][messages]") {
  const std::string e = message_error_line({"estimate", "--config", ""});
  CHECK(e.rfind("memplan: error: --config: ", 0) == 0);
}

TEST_CASE("messages: a directory as --plan is a directory", "[cli][errors][messages]") {
  const std::string e = message_error_line({"estimate", "--plan", temp_dir("plan")});
  CHECK(e.find("--plan") != std::string::npos);
  CHECK(e.find("is a directory") != std::string::npos);
}

TEST_CASE("messages: a --presets directory without presets says what it lacks, not a size",
          "[cli][errors][messages]") {
  const std::string e = message_error_line({"gpus", "--presets", temp_dir("presets")});
  CHECK(e.find("holds neither gpus.json nor model_presets.json") != std::string::npos);
  CHECK(e.find("larger than") == std::string::npos);
}

TEST_CASE("messages: a raw 0xFF byte and an escape sequence in a value are echoed escaped",
          "[cli][errors][messages]") {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"estimate", "--params", "7e9", "--gpu", "t\xff"},
        {"estimate", "--params", "7\xff"},
        {"\xff"},
        {"estimate", "--params", "7e9", "--\xff"},
        {"estimate", "--params", "\x1b[31m7"}}) {
    const std::string e = message_error_line(args);
    for (char c : e) CHECK(((static_cast<unsigned char>(c) >= 0x20 && c != 0x7f) || c == '\n'));
    for (char c : e) CHECK(static_cast<unsigned char>(c) < 0x80);  // none of these is valid UTF-8
    CHECK((e.find("\\xFF") != std::string::npos || e.find("\\x1B") != std::string::npos));
  }
  // Valid UTF-8 is kept as it is.
  const std::string e = message_error_line({"estimate", "--params", "7e9", "--gpu", "t\xc3\xa9"});
  CHECK(e.find("t\xc3\xa9") != std::string::npos);
}

TEST_CASE("messages: --grad-min 1e-400 is quoted as written and said to underflow",
          "[cli][errors][messages]") {
  CHECK(message_error_line({"scale", "--grad-min", "1e-400", "--grad-max", "3.5"}) ==
        "memplan: error: --grad-min: \"1e-400\" underflows to 0 in a double (the smallest positive is about "
        "4.9e-324)\n");
  CHECK(message_error_line({"scale", "--grad-min", "1e-9", "--grad-max", "1e400"}) ==
        "memplan: error: --grad-max: \"1e400\" overflows a double (the largest is about 1.8e308)\n");
}

TEST_CASE("messages: did you mean misspelt options and commands", "[cli][errors][messages]") {
  CHECK(message_error_line({"estimate", "--parms", "7e9"}) ==
        "memplan: error: The following arguments were not expected: 7e9 --parms (did you mean "
        "\"--params\"?)\n");
  CHECK(message_error_line({"estimate", "--params", "7e9", "--optimiser=adamw"})
            .find("did you mean \"--optimizer\"?") != std::string::npos);
  CHECK(message_error_line({"gpus", "--formt", "json"}).find("did you mean \"--format\"?") !=
        std::string::npos);
  CHECK(message_error_line({"estimte", "--params", "7e9"}).find("did you mean \"estimate\"?") !=
        std::string::npos);
  CHECK(message_error_line({"max-bach"}).find("did you mean \"max-batch\"?") != std::string::npos);
  // Nothing close: no suggestion.
  CHECK(message_error_line({"estimate", "--params", "7e9", "--zzzzzzzz", "1"}).find("did you mean") ==
        std::string::npos);
}

TEST_CASE("messages: --quantize nf4 on a full fine-tune is refused (it would change nothing)",
          "[cli][errors][messages]") {
  const std::string e = message_error_line({"estimate", "--model", "llama-2-7b", "--quantize", "nf4"});
  CHECK(e ==
        "memplan: error: --quantize: stores frozen weights, and a full fine-tune has none (expected --lora R "
        "or "
        "--trainable F for QLoRA, or --mode infer)\n");
  // With adapters, a trainable share, or for inference it applies.
  CHECK(run_cli({"estimate", "--model", "llama-2-7b", "--quantize", "nf4", "--lora", "16"}).code == 0);
  CHECK(run_cli({"estimate", "--model", "llama-2-7b", "--quantize", "nf4", "--trainable", "0.01"}).code == 0);
  CHECK(run_cli({"estimate", "--model", "llama-2-7b", "--quantize", "nf4", "--mode", "infer"}).code == 0);
}

TEST_CASE(
    "messages: --params with --seq and --batch says on the default output that no activations are counted",
    "[cli][messages]") {
  const auto r = run_cli({"estimate", "--params", "7e9", "--seq", "2048", "--batch", "8"});
  CHECK(r.code == 0);
  CHECK(r.out.find("note: --batch and --seq change nothing here: no activations are counted without an "
                   "architecture") != std::string::npos);
  // A bare parameter count (the lesson's table) has nothing to warn about.
  CHECK(run_cli({"estimate", "--params", "7e9"}).out.find("change nothing") == std::string::npos);
  // An architecture counts them: no note.
  CHECK(
      run_cli({"estimate", "--model", "gpt2", "--seq", "1024", "--batch", "8"}).out.find("change nothing") ==
      std::string::npos);
}

TEST_CASE("messages: cast -- -1 works like cast -1", "[cli][messages]") {
  const auto plain = run_cli({"cast", "-1"});
  const auto dashes = run_cli({"cast", "--", "-1"});
  CHECK(plain.code == 0);
  CHECK(dashes.code == 0);
  CHECK(dashes.out == plain.out);
  CHECK(dashes.err == plain.err);
}
