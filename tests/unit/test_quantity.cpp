#include <catch2/catch.hpp>

#include <memplan/error.hpp>
#include <memplan/quantity.hpp>
#include "core/base/quantity_kinds.hpp"

using namespace memplan;

TEST_CASE("parse_count accepts the documented spellings", "[quantity]") {
  CHECK(parse_count("--params", "7e9") == 7000000000ull);
  CHECK(parse_count("--params", "7B") == 7000000000ull);
  CHECK(parse_count("--params", "6.74b") == 6740000000ull);
  CHECK(parse_count("--params", "125M") == 125000000ull);
  CHECK(parse_count("--params", "1.5T") == 1500000000000ull);
  CHECK(parse_count("--params", "7_000_000_000") == 7000000000ull);
  CHECK(parse_count("--params", "124439808") == 124439808ull);
  CHECK(parse_count("--batch", "1k") == 1000ull);
}

TEST_CASE("parse_count refuses bad input with the option and value named", "[quantity]") {
  auto msg = [](const char* text) {
    try {
      parse_count("--params", text, 1000000000000000ull);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(msg("7x9") == "--params: \"7x9\" is not a number (expected e.g. 7e9, 7B, 125M)");
  CHECK(msg("-7e9") == "--params: \"-7e9\" is negative (expected a count, e.g. 7e9, 7B, 125M)");
  CHECK(msg("") == "--params: empty value (expected e.g. 7e9, 7B, 125M)");
  CHECK(msg("1.5") == "--params: \"1.5\" is not a whole number (expected a count, e.g. 7e9, 7B, 125M)");
  CHECK(msg("nan") == "--params: \"nan\" is not a number (expected e.g. 7e9, 7B, 125M)");
  CHECK(msg("inf") == "--params: \"inf\" is not a number (expected e.g. 7e9, 7B, 125M)");
  CHECK(msg("1e30") == "--params: \"1e30\" is too large (at most 1,000,000,000,000,000)");
  CHECK(msg("7BB") == "--params: \"7BB\" is not a number (expected e.g. 7e9, 7B, 125M)");
  CHECK(msg("1e99999999") == "--params: \"1e99999999\" is too large (at most 1,000,000,000,000,000)");
}

TEST_CASE("parse_size accepts binary and decimal units", "[quantity]") {
  CHECK(parse_size("--memory", "24GiB") == 24ull << 30);
  CHECK(parse_size("--memory", "80GB") == 80000000000ull);
  CHECK(parse_size("--memory", "15360MiB") == 15360ull << 20);
  CHECK(parse_size("--memory", "1.5GiB") == 3ull << 29);
  CHECK(parse_size("--memory", "512") == 512ull);
  CHECK_THROWS_AS(parse_size("--memory", "12 parsecs"), Error);
  CHECK_THROWS_AS(parse_size("--memory", "-1GiB"), Error);
}

TEST_CASE("parse_fraction takes shares up to 1 and percentages", "[quantity]") {
  CHECK(parse_fraction("--trainable", "0.002") == Approx(0.002));
  CHECK(parse_fraction("--trainable", "0.2%") == Approx(0.002));
  CHECK(parse_fraction("--trainable", "1") == 1.0);
  CHECK_THROWS_AS(parse_fraction("--trainable", "0"), Error);
  CHECK_THROWS_AS(parse_fraction("--trainable", "1.5"), Error);
  CHECK_THROWS_AS(parse_fraction("--trainable", "nan"), Error);
}

TEST_CASE("format_bytes gives the lesson's figures", "[quantity]") {
  CHECK(format_bytes(112000000000ull, Units::gib) == "104.3 GiB");
  CHECK(format_bytes(56000000000ull, Units::gib) == "52.2 GiB");
  CHECK(format_bytes(14000000000ull, Units::gib) == "13.0 GiB");
  CHECK(format_bytes(112000000000ull, Units::gb) == "112.0 GB");
  CHECK(format_bytes(17110000000ull, Units::gib) == "15.9 GiB");
  CHECK(format_bytes(512ull << 20, Units::gib) == "512.0 MiB");
  CHECK(format_bytes(100, Units::gib) == "100 B");
  CHECK(group_thousands(112000000000ull) == "112,000,000,000");
}

namespace {

std::string message_of(uint64_t (*parse)(std::string_view, std::string_view, uint64_t), const char* subject,
                       const char* text) {
  try {
    parse(subject, text, 1ull << 32);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("issue 27: --seq 8k is 8,192 tokens", "[quantity][issue27]") {
  // Token counts are said in powers of two: 8k = 8 x 1,024 (Llama 3's max_position_embeddings
  // 8192), 128k = 128 x 1,024 = 131,072 (Llama 3.1's 131072), 1M = 1,024 x 1,024.
  CHECK(parse_tokens("--seq", "8k") == 8ull * 1024);
  CHECK(parse_tokens("--seq", "8K") == 8192ull);
  CHECK(parse_tokens("--seq", "32k") == 32768ull);
  CHECK(parse_tokens("--seq", "128k") == 131072ull);
  CHECK(parse_tokens("--seq", "1M") == 1048576ull);
  CHECK(parse_tokens("--seq", "1.5k") == 1536ull);        // 1.5 x 1,024
  CHECK(parse_tokens("--seq", "0.0009765625k") == 1ull);  // 1 / 1,024 of a k
  CHECK(parse_tokens("--seq", "4096") == 4096ull);
  CHECK(parse_tokens("--seq", "4_096") == 4096ull);
  CHECK(parse_tokens("--seq", "8e3") == 8000ull);  // an exponent stays decimal
  CHECK(message_of(parse_tokens, "--seq", "1.3k") ==
        "--seq: \"1.3k\" is not a whole number (expected a count, e.g. 4096, 8k = 8,192, 128k = 131,072)");
  CHECK(message_of(parse_tokens, "--seq", "8B") ==
        "--seq: \"8B\": a token count takes k (1,024) or M (1,048,576) (expected e.g. 4096, 8k = 8,192, "
        "128k = 131,072)");
  CHECK(message_of(parse_tokens, "--seq", "5000M") ==
        "--seq: \"5000M\" is too large (at most 4,294,967,296)");  // 5,242,880,000
  CHECK(message_of(parse_tokens, "--seq", "8kk") ==
        "--seq: \"8kk\" is not a number (expected e.g. 4096, 8k = 8,192, 128k = 131,072)");
  // Parameter counts stay decimal.
  CHECK(parse_count("--params", "7B") == 7000000000ull);
  CHECK(parse_count("--params", "125M") == 125000000ull);
  CHECK(parse_count("--params", "8k") == 8000ull);
}

TEST_CASE("issue 27: a batch size is written in digits, not 1k", "[quantity][issue27]") {
  CHECK(parse_batch_size("--batch", "512") == 512ull);
  CHECK(parse_batch_size("--batch", "1_024") == 1024ull);
  CHECK(parse_batch_size("--batch", "1e3") == 1000ull);
  CHECK(message_of(parse_batch_size, "--batch", "1k") ==
        "--batch: \"1k\": a batch size is written in digits (is 1k 1,000 or 1,024?) (expected e.g. 8, "
        "512, 1024)");
  CHECK(message_of(parse_batch_size, "--batch", "2M") ==
        "--batch: \"2M\": a batch size is written in digits (is 1k 1,000 or 1,024?) (expected e.g. 8, "
        "512, 1024)");
  CHECK(message_of(parse_batch_size, "--batch", "8x") ==
        "--batch: \"8x\" is not a number (expected e.g. 8, 512, 1024)");
}
