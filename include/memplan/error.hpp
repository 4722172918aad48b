#pragma once
// Errors are data: what was wrong (subject), and a message naming the value and what was expected.
// The core throws them; the CLI catches them once and prints `memplan: error: <what()>` with exit 2.

#include <stdexcept>
#include <string>

namespace memplan {

// Bad input from the user: an option, a file, a value. Exit code 2.
class Error : public std::runtime_error {
 public:
  // subject: "--params", a file path, "config.json: hidden_size"; message: what is wrong.
  // what() is "<subject>: <message>".
  Error(std::string subject, const std::string& message)
      : std::runtime_error(subject.empty() ? message : subject + ": " + message),
        m_subject(std::move(subject)) {}

  const std::string& subject() const { return m_subject; }

 private:
  std::string m_subject;
};

// An arithmetic result that would not fit in 64 bits.
class OverflowError : public Error {
 public:
  using Error::Error;
};

}  // namespace memplan
