#include "net/model_info.hpp"

#include <nlohmann/json.hpp>

#include <memplan/error.hpp>
#include "core/base/json_text.hpp"

namespace memplan::net {

HubModelInfo parse_model_info(std::string_view body, const std::string& endpoint, const std::string& repo) {
  using nlohmann::json;
  // Bounded depth (a hostile server's "[[[[..." must not exhaust the stack), a key twice refused.
  const json j = memplan::detail::parse_json_text(body, endpoint, "the model information");
  if (!j.is_object() || !j.contains("sha") || !j["sha"].is_string())
    throw Error(endpoint, "the model information of " + repo + " is not JSON with a \"sha\"");
  HubModelInfo info;
  info.commit = j["sha"].get<std::string>();
  if (info.commit.size() != 40 || info.commit.find_first_not_of("0123456789abcdef") != std::string::npos)
    throw Error(endpoint, "the commit of " + repo + " is not a 40-digit hash");
  if (j.contains("siblings") && j["siblings"].is_array())
    for (const json& f : j["siblings"])
      if (f.is_object() && f.contains("rfilename") && f["rfilename"].is_string())
        info.files.push_back(f["rfilename"].get<std::string>());
  return info;
}

}  // namespace memplan::net
