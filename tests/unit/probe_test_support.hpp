#pragma once
// Shared by the probe tests: scenarios for the fake NVML and a scoped environment variable.

#include <cstdlib>
#include <optional>
#include <string>

namespace memplan::test {

// H100 80GB: 81559 MiB total, 469 MiB reserved, nothing used, compute capability 9.0.
inline const std::string k_h100 =
    "gpu:name=NVIDIA H100 80GB "
    "HBM3,uuid=GPU-11111111-aaaa,total=85520809984,reserved=491782144,used=0,cc=9.0";
// T4: 15360 MiB total, 251 MiB reserved, 3 MiB used, compute capability 7.5.
inline const std::string k_t4 =
    "gpu:name=Tesla T4,uuid=GPU-2222,total=16106127360,reserved=263192576,used=3145728,cc=7.5";

// Sets (or, with nullopt, unsets) an environment variable for one scope, then restores it.
class EnvVar {
 public:
  EnvVar(const char* name, std::optional<std::string> value) : m_name(name) {
    if (const char* old = std::getenv(name)) m_old = old;
    if (value)
      setenv(name, value->c_str(), 1);
    else
      unsetenv(name);
  }
  EnvVar(const EnvVar&) = delete;
  EnvVar& operator=(const EnvVar&) = delete;
  ~EnvVar() {
    if (m_old)
      setenv(m_name, m_old->c_str(), 1);
    else
      unsetenv(m_name);
  }

 private:
  const char* m_name;
  std::optional<std::string> m_old;
};

}  // namespace memplan::test
