#include "test_support.hpp"

#include <tunekit/config.hpp>
#include <tunekit/error.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

using tunekit::config;
using tunekit::value;
using tunekit_test::error_of;

TEST(config, typed_getters) {
  config c{{"BLOCK", 256}, {"alpha", 2.5}, {"fast", true}, {"algo", "tiled"}};
  EXPECT_EQ(c.get_int("BLOCK"), 256);
  EXPECT_EQ(c.get_double("alpha"), 2.5);
  EXPECT_TRUE(c.get_bool("fast"));
  EXPECT_EQ(c.get_string("algo"), "tiled");
}

TEST(config, keeps_value_types) {
  const config c{{"i", 256}, {"d", 256.0}, {"b", true}, {"s", "256"}};
  EXPECT_TRUE(c.at("i").is_int());
  EXPECT_TRUE(c.at("d").is_double());
  EXPECT_TRUE(c.at("b").is_bool());
  EXPECT_TRUE(c.at("s").is_string());
  EXPECT_NE((config{{"x", 256}}), (config{{"x", 256.0}}));
}

TEST(config, keeps_declared_order) {
  const config c{{"z", 1}, {"a", 2}, {"m", 3}};
  std::vector<std::string> names;
  for (const auto &f : c) {
    names.push_back(f.name);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"z", "a", "m"}));
  EXPECT_EQ(c.to_string(), "z=1, a=2, m=3");
  // Order is part of the canonical form.
  EXPECT_NE((config{{"a", 1}, {"b", 2}}), (config{{"b", 2}, {"a", 1}}));
}

TEST(config, missing_field_error_names_the_field_and_the_fields_there_are) {
  const config c{{"BLOCK", 256}, {"num_warps", 4}};
  const std::string msg = error_of([&] { static_cast<void>(c.get_int("BLOCK_M")); });
  EXPECT_NE(msg.find("'BLOCK_M'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("BLOCK, num_warps"), std::string::npos) << msg;
  EXPECT_NE(error_of([&] { static_cast<void>(c.at("nope")); }).find("'nope'"), std::string::npos);
  EXPECT_NE(error_of([] { static_cast<void>(config{}.at("x")); }).find("none"), std::string::npos);
}

TEST(config, wrong_type_error_names_the_field_and_types) {
  const config c{{"BLOCK", 256}, {"alpha", 2.5}, {"fast", true}, {"algo", "tiled"}};
  const std::string msg = error_of([&] { static_cast<void>(c.get_double("BLOCK")); });
  EXPECT_NE(msg.find("'BLOCK'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("double"), std::string::npos) << msg;
  EXPECT_NE(msg.find("int"), std::string::npos) << msg;
  EXPECT_NE(error_of([&] { static_cast<void>(c.get_int("alpha")); }).find("'alpha'"),
            std::string::npos);
  EXPECT_NE(error_of([&] { static_cast<void>(c.get_int("fast")); }).find("'fast'"),
            std::string::npos);
  EXPECT_NE(error_of([&] { static_cast<void>(c.get_bool("algo")); }).find("'algo'"),
            std::string::npos);
  EXPECT_NE(error_of([&] { static_cast<void>(c.get_string("BLOCK")); }).find("'BLOCK'"),
            std::string::npos);
}

TEST(config, duplicate_field_is_an_error) {
  const std::string msg = error_of([] { config c{{"BLOCK", 256}, {"BLOCK", 512}}; });
  EXPECT_NE(msg.find("'BLOCK'"), std::string::npos) << msg;
  EXPECT_THROW(config(std::vector<tunekit::field>{{"a", 1}, {"a", 1.0}}), tunekit::error);
}

TEST(config, set_replaces_in_place_or_appends) {
  config c{{"a", 1}, {"b", 2}};
  c.set("a", 10.5).set("c", "x");
  EXPECT_EQ(c.to_string(), "a=10.5, b=2, c=\"x\"");
  EXPECT_EQ(c.size(), 3U);
  EXPECT_TRUE(c.contains("c"));
  EXPECT_FALSE(c.contains("d"));
  EXPECT_EQ(c.find("d"), nullptr);
  ASSERT_NE(c.find("a"), nullptr);
  EXPECT_EQ(*c.find("a"), value(10.5));
}

TEST(config, template_id_is_part_of_identity_and_text) {
  config a{{"BLOCK", 256}};
  config b = a;
  b.set_template_id("tiled");
  EXPECT_NE(a, b);
  EXPECT_EQ(b.template_id(), "tiled");
  EXPECT_EQ(b.to_string(), "tiled:BLOCK=256");
  EXPECT_TRUE(config{}.empty());
  EXPECT_EQ(config{}.to_string(), "");
}
