#include "test_support.hpp"

#include <tunekit/key.hpp>

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <unordered_map>
#include <vector>

using tunekit::key;
using tunekit::value;

TEST(key, empty_key) {
  const key k;
  EXPECT_TRUE(k.empty());
  EXPECT_EQ(k.size(), 0U);
  EXPECT_EQ(k.to_string(), "()");
  EXPECT_EQ(k, key{});
  EXPECT_EQ(k.hash(), key{}.hash());
}

TEST(key, inline_values_keep_order_and_types) {
  const key k{1048576, "float32", true, 2.0};
  ASSERT_EQ(k.size(), key::inline_capacity);
  EXPECT_EQ(k[0], value(1048576));
  EXPECT_EQ(k[1], value("float32"));
  EXPECT_EQ(k[2], value(true));
  EXPECT_EQ(k[3], value(2.0));
  EXPECT_EQ(k.to_string(), "(1048576, \"float32\", true, 2.0)");
  EXPECT_EQ(k.values(), (std::vector<value>{1048576, "float32", true, 2.0}));
}

TEST(key, overflow_beyond_inline_capacity) {
  key k{1, 2, 3, 4, 5, 6};
  k.push_back("seven");
  ASSERT_EQ(k.size(), 7U);
  EXPECT_EQ(k[4], value(5));
  EXPECT_EQ(k[5], value(6));
  EXPECT_EQ(k[6], value("seven"));
  EXPECT_EQ(k.to_string(), "(1, 2, 3, 4, 5, 6, \"seven\")");
  EXPECT_EQ(k.values().size(), 7U);

  const key same(std::vector<value>{1, 2, 3, 4, 5, 6, "seven"});
  EXPECT_EQ(k, same);
  EXPECT_EQ(k.hash(), same.hash());

  const key other_tail(std::vector<value>{1, 2, 3, 4, 5, 6, "eight"});
  EXPECT_NE(k, other_tail);
  const key shorter{1, 2, 3, 4, 5, 6};
  EXPECT_NE(k, shorter);

  // A copy holds its own overflow values.
  key copy = k;
  copy.push_back(8);
  EXPECT_EQ(k.size(), 7U);
  EXPECT_EQ(copy.size(), 8U);
  EXPECT_NE(copy, k);
}

TEST(key, equality_respects_types_order_and_length) {
  EXPECT_EQ((key{1024, "f32"}), (key{1024, "f32"}));
  EXPECT_NE((key{1024}), (key{1024.0}));
  EXPECT_NE((key{1}), (key{true}));
  EXPECT_NE((key{1}), (key{"1"}));
  EXPECT_NE((key{1, 2}), (key{2, 1}));
  EXPECT_NE((key{1}), (key{1, 0}));
  EXPECT_NE(key{0}, key{}); // a default value is still a value
}

TEST(key, hash_separates_keys_that_differ) {
  EXPECT_NE((key{1024}).hash(), (key{1024.0}).hash());
  EXPECT_NE((key{1, 2}).hash(), (key{2, 1}).hash());
  EXPECT_NE((key{1}).hash(), (key{1, 0}).hash());
  EXPECT_EQ(std::hash<key>{}(key{7, "x"}), (key{7, "x"}).hash());
}

TEST(key, works_as_an_unordered_map_key) {
  std::unordered_map<key, int> m;
  m[key{1024, "f32"}] = 1;
  m[key{1024.0, "f32"}] = 2;
  m[key{1, 2, 3, 4, 5}] = 3;
  m[key{1, 2, 3, 4, 6}] = 4;
  EXPECT_EQ(m.size(), 4U);
  EXPECT_EQ(m.at(key{1024, "f32"}), 1);
  EXPECT_EQ(m.at(key{1024.0, "f32"}), 2);
  EXPECT_EQ(m.at(key{1, 2, 3, 4, 5}), 3);
  EXPECT_EQ(m.at(key{1, 2, 3, 4, 6}), 4);
  EXPECT_FALSE(m.contains(key{1, 2, 3, 4}));
}

TEST(key, copies_and_moves_keep_strings_and_overflow) {
  const std::string long_text(100, 'x'); // beyond the small-string buffer: on the heap
  key k{long_text, 2, "three", 4, long_text, 6};
  key copy = k;
  EXPECT_EQ(copy, k);
  key moved = std::move(copy);
  EXPECT_EQ(moved, k);
  EXPECT_TRUE(copy.empty()); // NOLINT(bugprone-use-after-move): a moved-from key is empty
  key assigned{1};
  assigned = moved;
  EXPECT_EQ(assigned, k);
  assigned = key{"short"};
  EXPECT_EQ(assigned, key{"short"});
  assigned = std::move(moved);
  EXPECT_EQ(assigned, k);
  const key &itself = assigned;
  assigned = itself;
  EXPECT_EQ(assigned, k);
}

TEST(key, a_value_that_throws_leaves_nothing_behind) {
  // The string built before the NaN is released (the sanitizer build checks for leaks).
  const std::string long_text(100, 'x');
  EXPECT_THROW((key{long_text, std::numeric_limits<double>::quiet_NaN()}), tunekit::error);
  EXPECT_THROW((key{long_text, 1, 2, 3, long_text, std::numeric_limits<double>::infinity()}),
               tunekit::error);
}
