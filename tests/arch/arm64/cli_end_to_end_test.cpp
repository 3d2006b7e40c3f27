// The built xprobe binary on an arm64 executable (cross-compiled here): decode prints the
// AArch64 classes, check accepts an ordinary instruction and refuses the exclusive sequence,
// the system call and a misaligned address.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct CommandResult {
  int status = -1;
  std::string output;
};

CommandResult run_xprobe(const std::string& arguments) {
  const std::string command = std::string(XPROBE_BINARY) + " " + arguments + " 2>&1";
  CommandResult result;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  std::array<char, 1024> buffer{};
  while (fgets(buffer.data(), static_cast<int>(buffer.size()), pipe) != nullptr) result.output += buffer.data();
  result.status = pclose(pipe);
  return result;
}

const std::string kProgram = XPROBE_ARM64_PROGRAM;

std::vector<std::vector<std::string>> decode_lines(const std::string& symbol) {
  const auto result = run_xprobe("decode " + kProgram + " " + symbol);
  EXPECT_EQ(result.status, 0) << result.output;
  std::vector<std::vector<std::string>> lines;
  std::istringstream in(result.output);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> columns;
    std::istringstream fields(line);
    std::string column;
    while (std::getline(fields, column, '\t')) columns.push_back(column);
    lines.push_back(columns);
  }
  return lines;
}

TEST(Arm64CliEndToEnd, DecodePrintsClassesAndTargets) {
  const auto lines = decode_lines("swap_word");
  ASSERT_GE(lines.size(), 5u);
  ASSERT_GE(lines[0].size(), 4u);
  EXPECT_EQ(lines[0][3], "exclusive");  // ldaxr
  EXPECT_EQ(lines[1][3], "none");       // add
  EXPECT_EQ(lines[2][3], "exclusive");  // stlxr
  ASSERT_GE(lines[3].size(), 5u);
  EXPECT_EQ(lines[3][3], "cbnz");
  EXPECT_EQ(lines[3][4], lines[0][0]);  // the loop's branch goes back to the ldaxr
  EXPECT_EQ(lines[0][2], "4");
  const auto explicit_arch = run_xprobe("decode --arch aarch64 " + kProgram + " add_three");
  EXPECT_EQ(explicit_arch.status, 0) << explicit_arch.output;
  EXPECT_NE(explicit_arch.output.find("\tret"), std::string::npos) << explicit_arch.output;
}

TEST(Arm64CliEndToEnd, CheckAcceptsAnOrdinaryInstruction) {
  const auto result = run_xprobe("check " + kProgram + " add_three");
  EXPECT_EQ(result.status, 0) << result.output;
  EXPECT_NE(result.output.find("accepted"), std::string::npos) << result.output;
}

TEST(Arm64CliEndToEnd, CheckRefusesInsideTheExclusiveSequence) {
  const auto inside = run_xprobe("check " + kProgram + " swap_word+4");
  EXPECT_NE(inside.status, 0) << inside.output;
  EXPECT_NE(inside.output.find("Could not insert probe"), std::string::npos) << inside.output;
  EXPECT_NE(inside.output.find("load-exclusive/store-exclusive sequence"), std::string::npos) << inside.output;
  const auto after = run_xprobe("check " + kProgram + " swap_word+12");  // the cbnz after the store
  EXPECT_EQ(after.status, 0) << after.output;
}

TEST(Arm64CliEndToEnd, CheckRefusesSystemCallAndMisalignedAddress) {
  const auto lines = decode_lines("make_syscall");
  size_t svc = lines.size();
  for (size_t i = 0; i < lines.size(); ++i)
    if (lines[i].size() >= 4 && lines[i][3] == "never") svc = i;
  ASSERT_LT(svc, lines.size());
  const auto refused = run_xprobe("check " + kProgram + " make_syscall+" + std::to_string(4 * svc));
  EXPECT_NE(refused.status, 0) << refused.output;
  EXPECT_NE(refused.output.find("SVC"), std::string::npos) << refused.output;
  const auto misaligned = run_xprobe("check " + kProgram + " add_three+2");
  EXPECT_NE(misaligned.status, 0) << misaligned.output;
  EXPECT_NE(misaligned.output.find("not a multiple of 4"), std::string::npos) << misaligned.output;
}

}  // namespace
