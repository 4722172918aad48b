// "did you mean": the nearest candidate within a third of the word's length, and no cell-by-cell
// comparison of a word far longer than every candidate.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "core/base/did_you_mean.hpp"

using memplan::did_you_mean;
using memplan::edit_distance;

TEST_CASE("did you mean: edit distance is Levenshtein's, case-insensitive", "[did_you_mean]") {
  CHECK(edit_distance("kitten", "sitting") == 3);
  CHECK(edit_distance("", "abc") == 3);
  CHECK(edit_distance("RTX-4090", "rtx-4090") == 0);
}

TEST_CASE("did you mean: a typo gets the nearest name, a stranger gets none", "[did_you_mean]") {
  const std::vector<std::string> flags = {"--params", "--precision", "--preset", "--batch"};
  CHECK(did_you_mean("--parms", flags) == "; did you mean \"--params\"?");
  CHECK(did_you_mean("--btach", flags) == "; did you mean \"--batch\"?");
  CHECK(did_you_mean("--zzzzzzzzzz", flags).empty());
  CHECK(did_you_mean("--parms", {}).empty());
}

TEST_CASE("did you mean: a word far longer than every candidate is not compared", "[did_you_mean]") {
  // A megabyte of option name: every candidate is further away in length alone than the limit
  // (a third of the word), so none is measured and none is suggested.
  const std::string blob = "--" + std::string(1 << 20, 'p');
  CHECK(did_you_mean(blob, {"--params", "--precision"}).empty());
  // Within the limit in length, the distance still decides.
  CHECK(did_you_mean("--paramsxx", {"--params"}) == "; did you mean \"--params\"?");
}
