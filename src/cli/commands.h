#pragma once
// Each subcommand registers its options on the CLI11 app and returns the function that runs it.
#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

namespace xprobe::cli {

using CommandRunner = std::function<int()>;

CommandRunner add_decode_command(CLI::App& app);
CommandRunner add_check_command(CLI::App& app);
CommandRunner add_list_command(CLI::App& app);
CommandRunner add_ctl_command(CLI::App& app);
// `program` is the traced command line (what follows "--"); main() fills it before parsing.
CommandRunner add_trace_command(CLI::App& app, const std::vector<std::string>& program);

}  // namespace xprobe::cli
