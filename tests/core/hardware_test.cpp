#include "test_support.hpp"

#include <tunekit/hardware.hpp>

#include <gtest/gtest.h>

#include <set>
#include <string>

using tunekit::hardware_info;

namespace {
hardware_info h200() { return hardware_info{"cuda", "NVIDIA H200", "sm_90", 132, 1}; }
} // namespace

TEST(hardware, digest_is_stable_sha256_hex) {
  const std::string d = h200().digest();
  EXPECT_EQ(d.size(), 64U);
  EXPECT_EQ(d.find_first_not_of("0123456789abcdef"), std::string::npos) << d;
  EXPECT_EQ(d, h200().digest());
}

TEST(hardware, every_field_changes_the_digest) {
  std::set<std::string> digests{h200().digest()};
  auto changed = h200();
  changed.kind = "host";
  digests.insert(changed.digest());
  changed = h200();
  changed.name = "NVIDIA H100";
  digests.insert(changed.digest());
  changed = h200();
  changed.arch = "sm_80";
  digests.insert(changed.digest());
  changed = h200();
  changed.units = 114;
  digests.insert(changed.digest());
  changed = h200();
  changed.count = 8;
  digests.insert(changed.digest());
  EXPECT_EQ(digests.size(), 6U);
}

TEST(hardware, equality) {
  EXPECT_EQ(h200(), h200());
  auto other = h200();
  other.count = 2;
  EXPECT_NE(h200(), other);
}

TEST(hardware, to_string) {
  EXPECT_EQ(h200().to_string(), "NVIDIA H200 (sm_90, 132 units, 1 device)");
  auto eight = h200();
  eight.count = 8;
  EXPECT_EQ(eight.to_string(), "NVIDIA H200 (sm_90, 132 units, 8 devices)");
}

TEST(hardware, host_hardware_describes_this_machine) {
  const auto hw = tunekit::host_hardware();
  EXPECT_EQ(hw.kind, "host");
  EXPECT_FALSE(hw.name.empty());
  EXPECT_FALSE(hw.arch.empty());
  EXPECT_GE(hw.units, 1);
  EXPECT_EQ(hw.count, 1);
  EXPECT_EQ(hw, tunekit::host_hardware()); // stable within a process
}

TEST(hardware, core_dependencies_name_tunekit_and_the_compiler) {
  const auto deps = tunekit::core_dependencies();
  ASSERT_TRUE(deps.contains("tunekit"));
  EXPECT_EQ(deps.at("tunekit"), tunekit::version());
  ASSERT_TRUE(deps.contains("compiler"));
  EXPECT_FALSE(deps.at("compiler").empty());
  EXPECT_EQ(deps, tunekit::core_dependencies());
  EXPECT_FALSE(std::string(tunekit::version()).empty());
}
