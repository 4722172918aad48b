#pragma once
// For tests of bad input: what a call throws, as text.

#include <functional>
#include <string>

#include <memplan/error.hpp>

namespace memplan::test {

// The what() of the memplan::Error that `f` throws, or "no error" when it throws none.
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace memplan::test
