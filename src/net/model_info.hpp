#pragma once
// The Hub's model information (/api/models/<repo>/revision/<rev>) read from its body: the commit
// and the file list. Without libcurl (fuzzed: fuzz_hub_response).

#include <string>
#include <string_view>
#include <vector>

namespace memplan::net {

struct HubModelInfo {
  std::string commit;              // 40 lower-case hexadecimal digits
  std::vector<std::string> files;  // siblings[].rfilename, as listed
};

// Throws memplan::Error naming `endpoint` for a body that is no JSON object with a "sha" (deeper
// than the JSON readers' limit, a key twice, ...) or whose sha is no commit hash.
HubModelInfo parse_model_info(std::string_view body, const std::string& endpoint, const std::string& repo);

}  // namespace memplan::net
