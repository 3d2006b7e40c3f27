// The torture tests adopt orphans (a launched program outliving its xprobe) so that leftover
// stopped or zombie processes show up as our children.
#include <gtest/gtest.h>

#include "torture_support.h"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  xprobe::torture::become_subreaper();
  return RUN_ALL_TESTS();
}
