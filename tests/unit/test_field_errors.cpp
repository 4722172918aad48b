// Errors carry the request field they concern; the CLI maps a field to its flag through the
// option table, so the library never names a flag and the printed line stays the same.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include <memplan/error.hpp>
#include <memplan/estimate.hpp>
#include <memplan/storage_format.hpp>

#include "cli/options.hpp"

using namespace memplan;

TEST_CASE("a field error: key in what(), flag on the command line", "[errors][options]") {
  const Error e(Field::lora_targets, "no matrix is adapted");
  CHECK(e.field() == Field::lora_targets);
  CHECK(std::string(e.what()) == "lora_targets: no matrix is adapted");
  CHECK(e.message() == "no matrix is adapted");
  CHECK(cli::error_text(e) == "--lora-targets: no matrix is adapted");
  const Error file("config.json: hidden_size", "must be a positive integer");
  CHECK(file.field() == Field::none);
  CHECK(cli::error_text(file) == "config.json: hidden_size: must be a positive integer");
  // A command's own option, not in the planning table: its key with dashes.
  CHECK(cli::flag_for(Field::rows_per_step) == "--rows-per-step");
  CHECK(cli::flag_for(Field::max_seq) == "--max-seq");
}

TEST_CASE("the option table: one option per field, keys and flags agree", "[errors][options]") {
  std::set<std::string> keys, flags;
  for (const cli::OptionSpec& o : cli::plan_options()) {
    const std::string key = field_key(o.field);
    INFO(o.flag);
    CHECK(keys.insert(key).second);
    CHECK(flags.insert(o.flag).second);
    CHECK(cli::option_for_key(key) == &o);
    CHECK(cli::flag_for(o.field) == o.flag);
    std::string dashed = "--" + key;
    for (char& c : dashed)
      if (c == '_') c = '-';
    CHECK(dashed == o.flag);  // plan-file key and flag are one name
  }
  CHECK(cli::plan_options().size() == 67);  // every planning flag, one per field
}

TEST_CASE("an option's rule tags its error with the field", "[errors][options]") {
  cli::PlanValues v;
  const cli::OptionSpec& batch = *cli::option_for_key("batch");
  try {
    cli::parse_option(batch, "2.5", v);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.field() == Field::batch);
    CHECK(cli::error_text(e) ==
          "--batch: \"2.5\" is not a whole number (expected a count, e.g. 8, 512, 1024)");
  }
  cli::parse_option(*cli::option_for_key("attention"), "flash", v);
  CHECK(v.attention == Attention::sdpa);
  cli::parse_option(*cli::option_for_key("quantize"), "NF4", v);
  CHECK(v.quantize == StorageFormatId::nf4);
  cli::parse_option(*cli::option_for_key("gpus"), "auto", v);
  CHECK(v.gpus_auto);
  CHECK_FALSE(v.gpus);
}

TEST_CASE("the library's errors carry their field", "[errors][options]") {
  EstimateRequest r;
  r.model.parameters = 1000;
  r.trainable = 0.0;
  try {
    estimate(r);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.field() == Field::trainable);
    CHECK(e.message() == "must be in (0, 1]");
  }
  r.trainable = 1.0;
  r.batch = 0;
  try {
    estimate(r);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.field() == Field::batch);
  }
}

TEST_CASE("storage format ids name their table row", "[errors][storage_format]") {
  for (const StorageFormat& f : storage_formats()) CHECK(storage_format(f.id).name == f.name);
  CHECK(storage_format(StorageFormatId::nf4_dq).name == "nf4-dq");
  CHECK(find_storage_format("q", "float16").id == StorageFormatId::fp16);
}
