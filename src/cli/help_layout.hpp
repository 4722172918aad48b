#pragma once
// The planning commands' --help laid out by what a user decides: the options in groups (Model,
// Run, Precision, Memory savers, GPUs, Runtime/engine, Output, in that order), each with a typed
// placeholder (N, SIZE, LIST, FILE, {a|b}) instead of CLI11's TEXT, descriptions wrapped to 100
// columns. One table (help_layout.cpp) says each option's group and placeholder.

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace memplan::cli {

// The help groups, in the order --help lists them.
enum class HelpGroup { model, run, precision, memory_savers, gpus, runtime, output };

// "Model", "Run", ..., "Runtime/engine", "Output".
const char* help_group_title(HelpGroup group);

// The group and placeholder of a long flag ("--seq"), from the table; nullptr when not listed.
struct HelpRow {
  const char* flag;   // "--seq"
  HelpGroup group;    // HelpGroup::run
  const char* value;  // "N"; "" for a switch
};
const HelpRow* help_row(const std::string& flag);

// Puts every option of `sub` in its group with its placeholder (the help flag in Output) and
// gives `sub` the grouped formatter. Options the table does not list stay in CLI11's "Options".
void lay_out_help(CLI::App& sub);

// The long flags of `sub` ("--seq", "--help"), in registration order.
std::vector<std::string> long_flags(const CLI::App& sub);

}  // namespace memplan::cli
