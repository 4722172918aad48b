#include "probe/visible_devices.hpp"

#include <algorithm>
#include <cctype>

namespace memplan {
namespace {

std::vector<std::string_view> split_commas(std::string_view s) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t comma = s.find(',', start);
    parts.push_back(
        s.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return parts;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// The leading decimal number of s like strtoul would read it (an optional '+'), or nullopt when
// s does not start with digits or starts with '-'. Values above 2^20 are treated as invalid.
std::optional<unsigned> leading_ordinal(std::string_view s) {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  size_t n = 0;
  unsigned long value = 0;
  while (n < s.size() && std::isdigit(static_cast<unsigned char>(s[n]))) {
    value = value * 10 + static_cast<unsigned long>(s[n] - '0');
    if (value > (1ul << 20)) return std::nullopt;
    ++n;
  }
  if (n == 0) return std::nullopt;
  return static_cast<unsigned>(value);
}

bool has_prefix(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

}  // namespace

VisibleDevices parse_visible_devices(std::optional<std::string_view> value) {
  VisibleDevices v;
  if (!value) return v;
  std::string_view text = *value;
  if (has_prefix(text, "GPU-") || has_prefix(text, "MIG-")) {
    const std::string_view prefix = text.substr(0, 4);
    v.kind = prefix == "GPU-" ? VisibleDevices::Kind::gpu_uuids : VisibleDevices::Kind::mig_uuids;
    for (std::string_view entry : split_commas(text)) {
      if (!has_prefix(entry, prefix)) break;  // a different kind ends the list
      if (std::find(v.uuids.begin(), v.uuids.end(), entry) != v.uuids.end()) {
        v.uuids.clear();  // a repeated id gives an empty set
        return v;
      }
      v.uuids.emplace_back(entry);
    }
    return v;
  }
  v.kind = VisibleDevices::Kind::ordinals;
  for (std::string_view entry : split_commas(text)) {
    const auto ordinal = leading_ordinal(trim(entry));
    if (!ordinal) break;  // negative, empty or junk ends the list
    if (std::find(v.ordinals.begin(), v.ordinals.end(), *ordinal) != v.ordinals.end()) {
      v.ordinals.clear();
      return v;
    }
    v.ordinals.push_back(*ordinal);
  }
  return v;
}

std::vector<size_t> select_visible(const VisibleDevices& visible, const std::vector<std::string>& uuids) {
  std::vector<size_t> chosen;
  switch (visible.kind) {
    case VisibleDevices::Kind::all:
      for (size_t i = 0; i < uuids.size(); ++i) chosen.push_back(i);
      break;
    case VisibleDevices::Kind::ordinals:
      for (unsigned ordinal : visible.ordinals) {
        if (ordinal >= uuids.size()) break;
        chosen.push_back(ordinal);
      }
      break;
    case VisibleDevices::Kind::gpu_uuids:
    case VisibleDevices::Kind::mig_uuids:
      for (const std::string& prefix : visible.uuids) {
        size_t matches = 0, match = 0;
        for (size_t i = 0; i < uuids.size(); ++i)
          if (has_prefix(uuids[i], prefix)) ++matches, match = i;
        if (matches != 1) break;  // unknown or ambiguous ends the list
        if (std::find(chosen.begin(), chosen.end(), match) != chosen.end()) return {};
        chosen.push_back(match);
      }
      break;
  }
  return chosen;
}

}  // namespace memplan
