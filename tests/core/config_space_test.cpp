#include "test_support.hpp"

#include <tunekit/config_space.hpp>
#include <tunekit/error.hpp>

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

using tunekit::config;
using tunekit::config_space;
using tunekit::parameter;
using tunekit_test::error_of;

namespace {
std::vector<std::string> texts(const config_space &s) {
  std::vector<std::string> out;
  for (const auto &c : s) {
    out.push_back(c.to_string());
  }
  return out;
}
} // namespace

TEST(config_space, explicit_list_keeps_order_and_first_is_default) {
  const config_space s{config{{"BLOCK", 1024}}, config{{"BLOCK", 256}}, config{{"BLOCK", 512}}};
  ASSERT_EQ(s.size(), 3U);
  EXPECT_EQ(s[0], (config{{"BLOCK", 1024}}));
  EXPECT_EQ(texts(s), (std::vector<std::string>{"BLOCK=1024", "BLOCK=256", "BLOCK=512"}));
  EXPECT_EQ(s.index_of(config{{"BLOCK", 512}}), 2U);
  EXPECT_EQ(s.index_of(config{{"BLOCK", 512.0}}), std::nullopt);
  EXPECT_TRUE(s.has_field("BLOCK"));
  EXPECT_FALSE(s.has_field("num_warps"));
}

TEST(config_space, explicit_list_rejects_duplicates) {
  const std::string msg = error_of([] {
    config_space s{config{{"B", 1}}, config{{"B", 2}}, config{{"B", 1}}};
  });
  EXPECT_NE(msg.find("#0"), std::string::npos) << msg;
  EXPECT_NE(msg.find("#2"), std::string::npos) << msg;
  // Same text but different types are different configs.
  EXPECT_NO_THROW(config_space({config{{"B", 1}}, config{{"B", 1.0}}, config{{"B", "1"}}}));
}

TEST(config_space, an_empty_explicit_list_is_an_error_when_the_space_is_built) {
  const std::string msg = error_of([] { config_space s(std::vector<config>{}); });
  EXPECT_NE(msg.find("at least one config"), std::string::npos) << msg;
  EXPECT_FALSE(error_of([] { config_space s(std::initializer_list<config>{}); }).empty());
}

TEST(config_space, product_varies_the_last_parameter_fastest) {
  const auto s = config_space::product({{"BLOCK", {256, 512, 1024}}, {"num_warps", {4, 8}}});
  EXPECT_EQ(texts(s),
            (std::vector<std::string>{"BLOCK=256, num_warps=4", "BLOCK=256, num_warps=8",
                                      "BLOCK=512, num_warps=4", "BLOCK=512, num_warps=8",
                                      "BLOCK=1024, num_warps=4", "BLOCK=1024, num_warps=8"}));
  EXPECT_EQ(s[0], (config{{"BLOCK", 256}, {"num_warps", 4}}));
}

TEST(config_space, product_keeps_value_types) {
  const auto s = config_space::product(
      {{"i", {256}}, {"d", {256.0, 0.5}}, {"b", {true, false}}, {"s", {"tiled"}}});
  ASSERT_EQ(s.size(), 4U);
  EXPECT_TRUE(s[0].at("i").is_int());
  EXPECT_TRUE(s[0].at("d").is_double());
  EXPECT_EQ(s[0].get_double("d"), 256.0);
  EXPECT_TRUE(s[0].at("b").is_bool());
  EXPECT_TRUE(s[0].at("s").is_string());
  // 256 and 256.0 are distinct values of one domain.
  EXPECT_EQ(config_space::product({{"x", {256, 256.0}}}).size(), 2U);
}

TEST(config_space, product_with_constraints) {
  // The CLBlast-style rule: MWG must be a multiple of MDIMC * VWM.
  const auto s = config_space::product(
      {{"MWG", {16, 32, 64}}, {"MDIMC", {8, 16}}, {"VWM", {1, 2, 4}}}, {[](const config &c) {
        return c.get_int("MWG") % (c.get_int("MDIMC") * c.get_int("VWM")) == 0;
      }});
  std::size_t expected = 0;
  for (int mwg : {16, 32, 64}) {
    for (int mdimc : {8, 16}) {
      for (int vwm : {1, 2, 4}) {
        expected += mwg % (mdimc * vwm) == 0 ? 1 : 0;
      }
    }
  }
  EXPECT_EQ(s.size(), expected);
  EXPECT_LT(s.size(), 18U);
  for (const auto &c : s) {
    EXPECT_EQ(c.get_int("MWG") % (c.get_int("MDIMC") * c.get_int("VWM")), 0) << c.to_string();
  }
  // Order among the survivors is still the product order; the first survivor is the default.
  EXPECT_EQ(s[0], (config{{"MWG", 16}, {"MDIMC", 8}, {"VWM", 1}}));
  EXPECT_EQ(s[1], (config{{"MWG", 16}, {"MDIMC", 8}, {"VWM", 2}}));
  EXPECT_EQ(s[2], (config{{"MWG", 16}, {"MDIMC", 16}, {"VWM", 1}}));
}

TEST(config_space, every_constraint_must_hold) {
  const auto s = config_space::product({{"a", {1, 2, 3, 4}}, {"b", {1, 2}}},
                                       {[](const config &c) { return c.get_int("a") % 2 == 0; },
                                        [](const config &c) { return c.get_int("b") == 1; }});
  EXPECT_EQ(texts(s), (std::vector<std::string>{"a=2, b=1", "a=4, b=1"}));
}

TEST(config_space, product_errors) {
  EXPECT_NE(error_of([] { static_cast<void>(config_space::product({})); }), "");
  EXPECT_NE(error_of([] {
              static_cast<void>(config_space::product({{"BLOCK", {}}}));
            }).find("'BLOCK'"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              static_cast<void>(config_space::product({{"BLOCK", {1}}, {"BLOCK", {2}}}));
            }).find("'BLOCK'"),
            std::string::npos);
  const std::string dup = error_of([] {
    static_cast<void>(config_space::product({{"BLOCK", {256, 512, 256}}}));
  });
  EXPECT_NE(dup.find("'BLOCK'"), std::string::npos) << dup;
  EXPECT_NE(dup.find("256"), std::string::npos) << dup;
  const std::string none = error_of([] {
    static_cast<void>(
        config_space::product({{"a", {1, 2}}, {"b", {3}}}, {[](const config &) { return false; }}));
  });
  EXPECT_NE(none.find("all 2"), std::string::npos) << none;
}

TEST(config_space, default_constructed_is_empty) {
  const config_space s;
  EXPECT_TRUE(s.empty());
  EXPECT_EQ(s.size(), 0U);
  EXPECT_EQ(s.index_of(config{{"a", 1}}), std::nullopt);
}

TEST(config_space, configs_whose_text_looks_alike_are_not_duplicates) {
  // Same canonical text "a=1, b=2", different fields: a one-field config whose string value
  // contains ", b=2" would print alike only with an unquoted string; names with '=' would too.
  const tunekit::config one{{"a=1, b", 2}};
  const tunekit::config two{{"a", 1}, {"b", 2}};
  EXPECT_NO_THROW(tunekit::config_space({one, two}));
  EXPECT_THROW(tunekit::config_space({two, two}), tunekit::error);
}

TEST(config_space, a_product_beyond_a_64_bit_count_is_refused_as_too_large) {
  // 8 parameters of 256 values: 2^64 configs, which a 64-bit count wraps to 0.
  std::vector<tunekit::value> domain;
  for (int v = 0; v < 256; ++v) {
    domain.emplace_back(v);
  }
  std::vector<parameter> params;
  for (const char *name : {"a", "b", "c", "d", "e", "f", "g", "h"}) {
    params.push_back({name, domain});
  }
  const std::string msg = error_of([&] { static_cast<void>(config_space::product(params)); });
  EXPECT_NE(msg.find("256 x 256 x 256 x 256 x 256 x 256 x 256 x 256"), std::string::npos) << msg;
  EXPECT_NE(msg.find("more configs than a 64-bit count holds"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("constraints removed"), std::string::npos) << msg;
}

TEST(config_space, configs_differing_only_in_field_order_are_one_config) {
  // Artifacts, lookup tables and the cache match a config whatever its field order, so a space
  // holding both orders would be ambiguous: it is refused, naming both.
  const std::string msg = error_of([] {
    config_space s{config{{"a", 1}, {"b", 2}}, config{{"a", 2}, {"b", 2}},
                   config{{"b", 2}, {"a", 1}}};
  });
  EXPECT_NE(msg.find("another order"), std::string::npos) << msg;
  EXPECT_NE(msg.find("#0: a=1, b=2"), std::string::npos) << msg;
  EXPECT_NE(msg.find("#2: b=2, a=1"), std::string::npos) << msg;
  // Different values or different templates stay distinct.
  EXPECT_NO_THROW(config_space({config{{"a", 1}, {"b", 2}}, config{{"b", 1}, {"a", 2}}}));
  config t{{"b", 2}, {"a", 1}};
  t.set_template_id("other");
  EXPECT_NO_THROW(config_space({config{{"a", 1}, {"b", 2}}, t}));
}
