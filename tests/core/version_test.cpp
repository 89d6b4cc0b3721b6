// The generated tunekit/version.hpp: its macros and the linked library agree.

#include <tunekit/version.hpp>

#include <gtest/gtest.h>

#include <string>

TEST(version, header_macros_and_library_agree) {
  const std::string parts = std::to_string(TUNEKIT_VERSION_MAJOR) + "." +
                            std::to_string(TUNEKIT_VERSION_MINOR) + "." +
                            std::to_string(TUNEKIT_VERSION_PATCH);
  EXPECT_EQ(parts, TUNEKIT_VERSION_STRING);
  EXPECT_EQ(std::string(tunekit::version()), TUNEKIT_VERSION_STRING);
}
