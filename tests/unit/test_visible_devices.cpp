#include <catch2/catch.hpp>

#include "probe/visible_devices.hpp"

using namespace memplan;
using Kind = VisibleDevices::Kind;

// The expected lists follow CUDA's documented behaviour as PyTorch emulates it in
// torch.cuda._parse_visible_devices / _transform_uuid_to_ordinals.

TEST_CASE("CUDA_VISIBLE_DEVICES: unset means every device", "[visible_devices]") {
  const VisibleDevices v = parse_visible_devices(std::nullopt);
  CHECK(v.kind == Kind::all);
  CHECK(select_visible(v, {"GPU-a", "GPU-b"}) == std::vector<size_t>{0, 1});
}

TEST_CASE("CUDA_VISIBLE_DEVICES: ordinals reorder and narrow", "[visible_devices]") {
  CHECK(parse_visible_devices("1,0").ordinals == std::vector<unsigned>{1, 0});
  CHECK(parse_visible_devices(" 2 , 0 ").ordinals == std::vector<unsigned>{2, 0});
  // strtoul reads the leading digits: "1gpu2,2ampere" is "1,2".
  CHECK(parse_visible_devices("1gpu2,2ampere").ordinals == std::vector<unsigned>{1, 2});
  // The first invalid entry ends the list.
  CHECK(parse_visible_devices("0,-1,1").ordinals == std::vector<unsigned>{0});
  CHECK(parse_visible_devices("0,x,1").ordinals == std::vector<unsigned>{0});
  // No device at all.
  CHECK(parse_visible_devices("").ordinals.empty());
  CHECK(parse_visible_devices("-1").ordinals.empty());
  // A repeat empties the list.
  CHECK(parse_visible_devices("0,1,0").ordinals.empty());

  const std::vector<std::string> three = {"GPU-a", "GPU-b", "GPU-c"};
  CHECK(select_visible(parse_visible_devices("2,0"), three) == std::vector<size_t>{2, 0});
  // An ordinal past the last device ends the list there.
  CHECK(select_visible(parse_visible_devices("1,7,0"), three) == std::vector<size_t>{1});
  CHECK(select_visible(parse_visible_devices("5"), three).empty());
}

TEST_CASE("CUDA_VISIBLE_DEVICES: UUIDs and their prefixes", "[visible_devices]") {
  const std::vector<std::string> uuids = {"GPU-8e7f0a11-aaaa", "GPU-8e7f9b22-bbbb", "GPU-1c33-cccc"};
  VisibleDevices v = parse_visible_devices("GPU-1c,GPU-8e7f0");
  CHECK(v.kind == Kind::gpu_uuids);
  CHECK(select_visible(v, uuids) == std::vector<size_t>{2, 0});
  // "GPU-8e7f" matches two devices: ambiguous, so the list ends before it.
  CHECK(select_visible(parse_visible_devices("GPU-1c,GPU-8e7f"), uuids) == std::vector<size_t>{2});
  // Unknown UUID: nothing.
  CHECK(select_visible(parse_visible_devices("GPU-ffff"), uuids).empty());
  // An ordinal after UUIDs ends the list; a repeated UUID empties it.
  CHECK(parse_visible_devices("GPU-1c,0").uuids == std::vector<std::string>{"GPU-1c"});
  CHECK(parse_visible_devices("GPU-1c,GPU-1c").uuids.empty());
  // Two prefixes of the same device count as a repeat.
  CHECK(select_visible(parse_visible_devices("GPU-1c,GPU-1c33"), uuids).empty());
  CHECK(parse_visible_devices("MIG-4f1d").kind == Kind::mig_uuids);
}
