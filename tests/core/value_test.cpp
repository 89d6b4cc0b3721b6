#include "test_support.hpp"

#include <tunekit/error.hpp>
#include <tunekit/value.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_set>

using tunekit::value;
using tunekit::value_type;

TEST(value, integers_of_any_width_become_int64) {
  EXPECT_EQ(value(std::int8_t{-3}).type(), value_type::int64);
  EXPECT_EQ(value(std::uint16_t{7}).type(), value_type::int64);
  EXPECT_EQ(value(256).type(), value_type::int64);
  EXPECT_EQ(value(256L).type(), value_type::int64);
  EXPECT_EQ(value(std::int64_t{1} << 40).as_int(), std::int64_t{1} << 40);
  EXPECT_EQ(value(-5).as_int(), -5);
}

TEST(value, floating_point_becomes_double) {
  EXPECT_EQ(value(2.5f).type(), value_type::float64);
  EXPECT_EQ(value(2.5).type(), value_type::float64);
  EXPECT_DOUBLE_EQ(value(2.5f).as_double(), 2.5);
}

TEST(value, bool_stays_bool) {
  const value t(true);
  EXPECT_TRUE(t.is_bool());
  EXPECT_FALSE(t.is_int());
  EXPECT_TRUE(t.as_bool());
  EXPECT_FALSE(value(false).as_bool());
}

TEST(value, text_becomes_string) {
  EXPECT_EQ(value("tiled").type(), value_type::string);
  EXPECT_EQ(value(std::string("tiled")).as_string(), "tiled");
  EXPECT_EQ(value(std::string_view("tiled")).as_string(), "tiled");
}

TEST(value, default_is_int_zero) {
  const value v;
  EXPECT_TRUE(v.is_int());
  EXPECT_EQ(v.as_int(), 0);
}

TEST(value, types_are_part_of_equality) {
  EXPECT_NE(value(256), value(256.0));
  EXPECT_NE(value(1), value(true));
  EXPECT_NE(value(0), value(false));
  EXPECT_NE(value(1), value("1"));
  EXPECT_EQ(value(256), value(std::int64_t{256}));
  EXPECT_EQ(value(256.0), value(256.0f));
  EXPECT_EQ(value("a"), value(std::string("a")));
}

TEST(value, wrong_accessor_names_both_types) {
  try {
    static_cast<void>(value(256.0).as_int());
    FAIL() << "as_int on a double did not throw";
  } catch (const tunekit::error &e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("int"), std::string::npos) << msg;
    EXPECT_NE(msg.find("double"), std::string::npos) << msg;
    EXPECT_NE(msg.find("256.0"), std::string::npos) << msg;
  }
  EXPECT_THROW(static_cast<void>(value(1).as_bool()), tunekit::error);
  EXPECT_THROW(static_cast<void>(value(true).as_int()), tunekit::error);
  EXPECT_THROW(static_cast<void>(value(1).as_string()), tunekit::error);
  EXPECT_THROW(static_cast<void>(value("x").as_double()), tunekit::error);
}

TEST(value, canonical_text_keeps_types_apart) {
  EXPECT_EQ(value(256).to_string(), "256");
  EXPECT_EQ(value(256.0).to_string(), "256.0");
  EXPECT_EQ(value(2.5).to_string(), "2.5");
  EXPECT_EQ(value(-1.0).to_string(), "-1.0");
  EXPECT_EQ(value(true).to_string(), "true");
  EXPECT_EQ(value(false).to_string(), "false");
  EXPECT_EQ(value("1").to_string(), "\"1\"");
  EXPECT_EQ(value("a\"b\\c").to_string(), R"("a\"b\\c")");
  const std::string big = value(1e20).to_string();
  EXPECT_NE(big.find('e'), std::string::npos) << big; // still recognisably a double
}

TEST(value, type_names) {
  EXPECT_EQ(tunekit::to_string(value_type::int64), "int");
  EXPECT_EQ(tunekit::to_string(value_type::float64), "double");
  EXPECT_EQ(tunekit::to_string(value_type::boolean), "bool");
  EXPECT_EQ(tunekit::to_string(value_type::string), "string");
}

TEST(value, hash_is_consistent_with_equality_and_separates_types) {
  EXPECT_EQ(value(256).hash(), value(std::int64_t{256}).hash());
  EXPECT_EQ(std::hash<value>{}(value("x")), value("x").hash());
  EXPECT_NE(value(1).hash(), value(1.0).hash());
  EXPECT_NE(value(1).hash(), value(true).hash());
  std::unordered_set<value> set{value(1), value(1.0), value(true), value("1")};
  EXPECT_EQ(set.size(), 4U);
  EXPECT_TRUE(set.contains(value(1.0)));
  EXPECT_FALSE(set.contains(value(2)));
}

TEST(value, unsigned_integers_above_int64_are_refused_not_wrapped) {
  EXPECT_EQ(tunekit::value(std::uint64_t{42}).as_int(), 42);
  const auto too_big = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) + 1;
  try {
    (void)tunekit::value(too_big);
    FAIL() << "expected an error";
  } catch (const tunekit::error &e) {
    EXPECT_NE(std::string(e.what()).find("int64 range"), std::string::npos) << e.what();
  }
}

TEST(value, non_finite_doubles_are_refused) {
  EXPECT_THROW((void)tunekit::value(std::numeric_limits<double>::quiet_NaN()), tunekit::error);
  EXPECT_THROW((void)tunekit::value(std::numeric_limits<double>::infinity()), tunekit::error);
  EXPECT_THROW((void)tunekit::value(-std::numeric_limits<float>::infinity()), tunekit::error);
  EXPECT_EQ(tunekit::value(0.5f).as_double(), 0.5);
}
