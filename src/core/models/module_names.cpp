// Module-name lists of quantisation configs, matched as the quantisers match them (module_names.hpp).

#include "core/models/module_names.hpp"

#include <memplan/error.hpp>
#include "core/base/json_text.hpp"

namespace memplan::detail {

NameList name_list(const std::string& subject, std::vector<std::string> patterns, bool exact) {
  NameList l;
  l.exact = exact;
  for (std::string p : patterns) {
    for (const char* prefix : {"model.language_model.", "language_model.model."})
      if (p.rfind(prefix, 0) == 0) p = "model." + p.substr(std::string(prefix).size());
    std::optional<std::regex> re;
    try {
      if (p.rfind("re:", 0) == 0) {
        re = std::regex(p.substr(3), std::regex::ECMAScript);
      } else if (p.find('*') != std::string::npos) {
        std::string r;
        for (char ch : p) {
          if (ch == '*')
            r += "[^.]*";
          else if (std::string(".^$|()[]{}+?\\").find(ch) != std::string::npos)
            r += std::string("\\") + ch;
          else
            r += ch;
        }
        re = std::regex(r, std::regex::ECMAScript);
      }
    } catch (const std::regex_error&) {
      throw Error(subject, "\"" + printable(p, 60) + "\" is not a pattern memplan can read");
    }
    l.text.push_back(p);
    l.re.push_back(std::move(re));
  }
  return l;
}

bool name_matches(const NameList& l, size_t i, const std::string& name) {
  const std::string& p = l.text[i];
  if (p == "Linear") return true;
  if (l.re[i]) {
    if (p.rfind("re:", 0) == 0)
      return std::regex_search(name, *l.re[i], std::regex_constants::match_continuous);
    return l.exact ? std::regex_match(name, *l.re[i]) : std::regex_search(name, *l.re[i]);
  }
  if (p.empty()) return false;
  if (!l.exact) return name.find(p) != std::string::npos;
  return name == p || (name.size() > p.size() && name.compare(name.size() - p.size(), p.size(), p) == 0 &&
                       name[name.size() - p.size() - 1] == '.');
}

bool any_match(const NameList& l, const std::string& name) {
  for (size_t i = 0; i < l.text.size(); ++i)
    if (name_matches(l, i, name)) return true;
  return false;
}

std::string module_name(const LinearGroup& g, uint64_t layer) {
  if (g.layers == 0) return g.name;
  return "model.layers." + std::to_string(layer) + "." + g.name;
}

}  // namespace memplan::detail
