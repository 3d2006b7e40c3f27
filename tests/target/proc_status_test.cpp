// The one /proc/PID/status parser (target/proc_status.h) against the kernel's own file, and the
// queries built on it.
#include "target/proc_status.h"

#include <signal.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "target/proc_queries.h"

namespace xprobe::target {
namespace {

TEST(ProcStatus, ReadsThisProcesssOwnStatusFile) {
  auto status = ProcStatus::of_process(::getpid());
  ASSERT_TRUE(status);
  EXPECT_EQ(status->number("Pid"), ::getpid());
  EXPECT_EQ(status->number("PPid"), ::getppid());
  EXPECT_EQ(status->number("TracerPid"), 0);
  ASSERT_TRUE(status->field("Name"));
  EXPECT_FALSE(status->field("Name")->empty());
  EXPECT_FALSE(status->field("NoSuchField"));
}

TEST(ProcStatus, ParsesFieldsMasksAndTheLastNspid) {
  const auto status = ProcStatus::parse("Name:\tworker thread\nState:\tS (sleeping)\nNSpid:\t4242\t17\n"
                                        "SigPnd:\t0000000000000100\nSigBlk:\tzz\nSeccomp:\t2\n");
  EXPECT_EQ(status.field("Name"), "worker thread");
  EXPECT_EQ(status.field("NSpid"), "4242\t17");
  EXPECT_EQ(status.mask("SigPnd"), uint64_t{0x100});
  EXPECT_FALSE(status.mask("SigBlk"));  // not hexadecimal
  EXPECT_EQ(status.number("Seccomp"), 2);
  EXPECT_FALSE(ProcStatus::of_process(-1));
}

TEST(ProcQueries, ABlockedPendingSignalIsNotUnblocked) {
  sigset_t block, previous;
  sigemptyset(&block);
  sigaddset(&block, SIGUSR2);
  ASSERT_EQ(pthread_sigmask(SIG_BLOCK, &block, &previous), 0);
  const pid_t tid = ::gettid();
  EXPECT_FALSE(signal_pending_unblocked(::getpid(), tid, SIGUSR2));
  ASSERT_EQ(::tgkill(::getpid(), tid, SIGUSR2), 0);
  auto status = ProcStatus::of_thread(::getpid(), tid);
  ASSERT_TRUE(status);
  EXPECT_TRUE(status->mask("SigPnd").value_or(0) & (uint64_t{1} << (SIGUSR2 - 1)));
  EXPECT_FALSE(signal_pending_unblocked(::getpid(), tid, SIGUSR2));  // pending, but blocked
  int taken = 0;
  ASSERT_EQ(sigwait(&block, &taken), 0);
  EXPECT_EQ(taken, SIGUSR2);
  ASSERT_EQ(pthread_sigmask(SIG_SETMASK, &previous, nullptr), 0);
  EXPECT_EQ(id_in_own_namespace(::getpid(), tid), tid);  // the test runs in the host's namespace
  EXPECT_EQ(seccomp_mode(::getpid()), 0);
  EXPECT_FALSE(process_is_ending(::getpid()));
}

}  // namespace
}  // namespace xprobe::target
