// The layout line counts GPUs and nodes in words that agree with the number.
#include <catch2/catch.hpp>

#include <string>

#include "cli_harness.hpp"

using memplan::test::run_cli;

TEST_CASE("the layout line agrees in number: 1 GPU on 1 node and 16 GPUs on 2 nodes", "[cli][parallel]") {
  auto one = run_cli({"estimate", "--params", "7B", "--gpus", "1", "--zero", "2", "--explain"});
  REQUIRE(one.code == 0);
  CHECK(one.out.find("Layout: 1 GPU on 1 node, DeepSpeed ZeRO stage 2") != std::string::npos);
  CHECK(one.out.find("layout: 1 GPU = 1 node x 1;") != std::string::npos);
  CHECK(one.out.find("GPUs on") == std::string::npos);
  CHECK(one.out.find("node(s)") == std::string::npos);

  auto many =
      run_cli({"estimate", "--params", "7B", "--gpus", "16", "--nodes", "2", "--zero", "2", "--explain"});
  REQUIRE(many.code == 0);
  CHECK(many.out.find("Layout: 16 GPUs on 2 nodes, DeepSpeed ZeRO stage 2") != std::string::npos);
  CHECK(many.out.find("layout: 16 GPUs = 2 nodes x 8;") != std::string::npos);
}
