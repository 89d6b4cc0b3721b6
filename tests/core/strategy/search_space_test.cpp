#include <tunekit/error.hpp>
#include <tunekit/strategy/search_space.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

namespace {

using tunekit::config;
using tunekit::neighbourhood;
using tunekit::search_space;

// 4 x 3 x 2 = 24 points; valid where A is divisible by B.
search_space small_product() {
  return search_space::product(
      {{"A", {2, 4, 6, 8}}, {"B", {1, 2, 3}}, {"C", {false, true}}},
      {[](const config &c) { return c.get_int("A") % c.get_int("B") == 0; }});
}

TEST(search_space, mixed_radix_round_trip_last_parameter_fastest) {
  auto s = small_product();
  EXPECT_EQ(s.product_size(), 24U);
  EXPECT_EQ(s.dimensions(), 3U);
  EXPECT_EQ(s.to_config(0), (config{{"A", 2}, {"B", 1}, {"C", false}}));
  EXPECT_EQ(s.to_config(1), (config{{"A", 2}, {"B", 1}, {"C", true}}));
  EXPECT_EQ(s.to_config(2), (config{{"A", 2}, {"B", 2}, {"C", false}}));
  for (std::size_t i = 0; i < s.product_size(); ++i) {
    EXPECT_EQ(s.index_of(s.to_config(i)), i);
    EXPECT_EQ(s.from_digits(s.digits(i)), i);
  }
  EXPECT_THROW((void)s.to_config(24), tunekit::error);
}

TEST(search_space, constraints_decide_validity_lazily) {
  auto s = small_product();
  EXPECT_FALSE(s.valid_count().has_value());
  EXPECT_TRUE(s.is_valid(*s.index_of({{"A", 6}, {"B", 3}, {"C", true}})));
  EXPECT_FALSE(s.is_valid(*s.index_of({{"A", 4}, {"B", 3}, {"C", true}})));
  EXPECT_FALSE(s.is_valid(1000));
  // A = 2, 4, 6, 8 with B = 1 (4) and B = 2 (4) and B = 3 (only 6): 9, times C: 18.
  EXPECT_EQ(s.valid_indices().size(), 18U);
}

TEST(search_space, a_throwing_constraint_makes_the_config_invalid) {
  auto s = search_space::product({{"A", {1, 2}}},
                                 {[](const config &c) { return c.get_int("missing") > 0; }});
  EXPECT_FALSE(s.is_valid(0));
}

TEST(search_space, product_errors_name_the_parameter) {
  EXPECT_THROW((void)search_space::product({}), tunekit::error);
  try {
    (void)search_space::product({{"A", {1, 2}}, {"A", {3}}});
    FAIL();
  } catch (const tunekit::error &e) {
    EXPECT_NE(std::string(e.what()).find("'A' is declared twice"), std::string::npos);
  }
  EXPECT_THROW((void)search_space::product({{"A", {}}}), tunekit::error);
  EXPECT_THROW((void)search_space::product({{"A", {1, 1}}}), tunekit::error);
}

TEST(search_space, neighbourhoods_hold_only_valid_points) {
  auto s = small_product();
  const std::size_t at = *s.index_of({{"A", 6}, {"B", 2}, {"C", false}});
  auto adjacent = s.neighbours(at, neighbourhood::adjacent);
  std::set<std::string> got;
  for (auto i : adjacent) {
    got.insert(s.to_config(i).to_string());
  }
  // A: 4 and 8 (both divisible by 2); B: 1 and 3 (6 % 3 == 0); C: true.
  EXPECT_EQ(got,
            (std::set<std::string>{"A=4, B=2, C=false", "A=8, B=2, C=false", "A=6, B=1, C=false",
                                   "A=6, B=3, C=false", "A=6, B=2, C=true"}));
  auto hamming = s.neighbours(at, neighbourhood::hamming);
  EXPECT_EQ(hamming.size(), 6U); // A: 2, 4, 8; B: 1, 3; C: true
  for (auto i : hamming) {
    EXPECT_TRUE(s.is_valid(i));
  }
}

TEST(search_space, samples_are_distinct_and_valid) {
  auto s = small_product();
  tunekit::search_rng rng(7);
  auto some = s.sample(rng, 10);
  ASSERT_EQ(some.size(), 10U);
  EXPECT_EQ(std::set<std::size_t>(some.begin(), some.end()).size(), 10U);
  for (auto i : some) {
    EXPECT_TRUE(s.is_valid(i));
  }
  auto all = s.sample(rng, 100); // more than there are: every valid config once
  EXPECT_EQ(all.size(), 18U);
}

TEST(search_space, sampling_falls_back_to_enumeration_when_almost_nothing_is_valid) {
  auto s = search_space::product(
      {{"A", {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}},
       {"B", {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}},
       {"C", {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}},
       {"D", {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}}},
      {[](const config &c) { return c.get_int("A") + c.get_int("B") + c.get_int("C") == 27; }});
  tunekit::search_rng rng(3);
  auto some = s.sample(rng, 10); // 10 of 10,000 points are valid
  EXPECT_EQ(some.size(), 10U);
  for (auto i : some) {
    EXPECT_TRUE(s.is_valid(i));
  }
}

TEST(search_space, a_large_product_samples_without_enumerating) {
  std::vector<tunekit::parameter> params;
  for (int p = 0; p < 8; ++p) { // 10^8 points: above the enumeration limit
    tunekit::parameter par{std::string(1, static_cast<char>('A' + p)), {}};
    for (int v = 0; v < 10; ++v) {
      par.values.emplace_back(v);
    }
    params.push_back(std::move(par));
  }
  auto s = search_space::product(params, {[](const config &c) { return c.get_int("A") < 5; }});
  tunekit::search_rng rng(11);
  auto some = s.sample(rng, 1000);
  EXPECT_EQ(some.size(), 1000U);
  EXPECT_THROW((void)s.valid_indices(), tunekit::error);
}

TEST(search_space, from_configs_infers_ordered_domains_and_keeps_the_list) {
  std::vector<config> list = {{{"B", 64}, {"mode", "fast"}, {"on", true}},
                              {{"B", 16}, {"mode", "slow"}, {"on", false}},
                              {{"B", 32}, {"mode", "fast"}, {"on", true}}};
  auto s = search_space::from_configs(list);
  ASSERT_EQ(s.dimensions(), 3U);
  EXPECT_EQ(s.parameters()[0].values, (std::vector<tunekit::value>{16, 32, 64}));
  EXPECT_EQ(s.parameters()[1].values, (std::vector<tunekit::value>{"fast", "slow"}));
  EXPECT_EQ(s.parameters()[2].values, (std::vector<tunekit::value>{false, true}));
  EXPECT_TRUE(s.is_listed());
  EXPECT_EQ(s.valid_count(), 3U);
  EXPECT_EQ(s.product_size(), 12U);
  for (std::size_t pos = 0; pos < list.size(); ++pos) {
    const std::size_t i = s.index_at(pos);
    EXPECT_EQ(s.to_config(i), list[pos]);
    EXPECT_EQ(s.position_of(i), pos);
    EXPECT_TRUE(s.is_valid(i));
  }
  EXPECT_FALSE(s.is_valid(*s.index_of({{"B", 16}, {"mode", "fast"}, {"on", true}})));
}

TEST(search_space, from_configs_errors_name_the_config) {
  std::vector<config> mixed = {{{"B", 1}}, {{"C", 2}}};
  try {
    (void)search_space::from_configs(mixed);
    FAIL();
  } catch (const tunekit::error &e) {
    EXPECT_NE(std::string(e.what()).find("config #1"), std::string::npos) << e.what();
  }
  std::vector<config> twice = {{{"B", 1}}, {{"B", 1}}};
  EXPECT_THROW((void)search_space::from_configs(twice), tunekit::error);
  EXPECT_THROW((void)search_space::from_configs(std::vector<config>{}), tunekit::error);
  std::vector<config> outside = {{{"B", 3}}};
  EXPECT_THROW((void)search_space::from_configs({{"B", {1, 2}}}, outside), tunekit::error);
}

TEST(search_space, from_a_config_space_product_keeps_its_declared_structure) {
  auto cs = tunekit::config_space::product(
      {{"BLOCK", {1024, 256, 512}}, {"warps", {4, 8}}},
      {[](const config &c) { return c.get_int("BLOCK") >= 512 || c.get_int("warps") == 4; }});
  auto s = search_space::from(cs);
  EXPECT_EQ(s.parameters()[0].values, (std::vector<tunekit::value>{1024, 256, 512}));
  EXPECT_EQ(s.valid_count(), cs.size());
  for (std::size_t pos = 0; pos < cs.size(); ++pos) {
    EXPECT_EQ(s.to_config(s.index_at(pos)), cs[pos]);
  }
}

TEST(search_space, transfer_maps_configs_by_name_and_value_and_skips_what_does_not_fit) {
  auto s = small_product();
  std::vector<config> from = {
      {{"C", true}, {"B", 2}, {"A", 8.0}, {"extra", 1}}, // any order, 8.0 matches 8, extra ignored
      {{"A", 4}, {"B", 3}, {"C", false}},                // invalid here
      {{"A", 5}, {"B", 1}, {"C", false}},                // 5 is not in the domain
      {{"A", 2}, {"B", 1}},                              // C missing
      {{"A", 8}, {"B", 2}, {"C", true}},                 // repeat of the first
      {{"A", 2}, {"B", 1}, {"C", false}}};
  auto idx = tunekit::transfer_indices(s, from);
  ASSERT_EQ(idx.size(), 2U);
  EXPECT_EQ(s.to_config(idx[0]), (config{{"A", 8}, {"B", 2}, {"C", true}}));
  EXPECT_EQ(s.to_config(idx[1]), (config{{"A", 2}, {"B", 1}, {"C", false}}));
}

TEST(distinct_best, passes_over_configs_one_parameter_from_a_faster_one_taken) {
  const std::vector<config> fastest_first = {
      {{"A", 8}, {"B", 2}, {"C", true}},  // the winner
      {{"A", 4}, {"B", 2}, {"C", true}},  // one parameter from it
      {{"A", 8}, {"B", 2}, {"C", false}}, // one parameter from it
      {{"A", 4}, {"B", 1}, {"C", true}},  // two from the winner
      {{"A", 8}, {"B", 2}},               // C missing: one from the winner
      {{"A", 2}, {"B", 1}, {"C", false}}, // two from each taken
      {{"A", 1}, {"B", 4}, {"C", false}}};
  const auto three = tunekit::distinct_best(fastest_first, 3);
  ASSERT_EQ(three.size(), 3U);
  EXPECT_EQ(three[0], fastest_first[0]);
  EXPECT_EQ(three[1], fastest_first[3]);
  EXPECT_EQ(three[2], fastest_first[5]);
  EXPECT_EQ(tunekit::distinct_best(fastest_first, 1), std::vector<config>{fastest_first[0]});
  EXPECT_TRUE(tunekit::distinct_best(fastest_first, 0).empty());
  EXPECT_EQ(tunekit::distinct_best(fastest_first, 10).size(), 4U); // all that qualify
  // The same fields in another template: another implementation, so taken.
  config other = fastest_first[1];
  other.set_template_id("other");
  const std::vector<config> two_templates = {fastest_first[0], fastest_first[1], other};
  EXPECT_EQ(tunekit::distinct_best(two_templates, 3),
            (std::vector<config>{fastest_first[0], other}));
}

TEST(search_rng, is_the_same_sequence_everywhere) {
  // mt19937_64's sequence is fixed by the standard; the helpers only do integer arithmetic.
  tunekit::search_rng rng(5489);
  EXPECT_EQ(rng.next(), 14514284786278117030ULL);
  tunekit::search_rng a(1);
  tunekit::search_rng b(1);
  for (int i = 0; i < 100; ++i) {
    const auto x = a.below(7);
    EXPECT_EQ(x, b.below(7));
    EXPECT_LT(x, 7U);
    const double u = a.uniform();
    EXPECT_EQ(u, b.uniform());
    EXPECT_GE(u, 0.0);
    EXPECT_LT(u, 1.0);
  }
}

} // namespace
