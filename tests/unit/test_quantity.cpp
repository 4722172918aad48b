#include <catch2/catch.hpp>

#include <memplan/error.hpp>
#include <memplan/quantity.hpp>

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
