// main() of every test executable: GoogleTest, then exit status 77 when any
// test skipped (and none failed), so that CTest reports the executable as
// skipped instead of passed. A failure always wins.
#include "gtest/gtest.h"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  int rc = RUN_ALL_TESTS();
  const ::testing::UnitTest* unit = ::testing::UnitTest::GetInstance();
  if (rc == 0 && unit->skipped_test_count() > 0) return 77;
  return rc;
}
