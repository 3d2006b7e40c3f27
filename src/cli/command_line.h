#pragma once

namespace xprobe::cli {

// Parses argv and runs the chosen subcommand: its exit status (CLI11's for --help and usage errors).
int run_command_line(int argc, char** argv);

}  // namespace xprobe::cli
