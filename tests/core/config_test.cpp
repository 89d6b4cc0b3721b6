#include <tunekit/tunekit.hpp>

#include <gtest/gtest.h>

TEST(config, typed_getters) {
  tunekit::config c{{"BLOCK", 256}, {"alpha", 2.5}, {"fast", true}, {"algo", "tiled"}};
  EXPECT_EQ(c.get_int("BLOCK"), 256);
  EXPECT_EQ(c.get_double("alpha"), 2.5);
  EXPECT_TRUE(c.get_bool("fast"));
  EXPECT_EQ(c.get_string("algo"), "tiled");
}
