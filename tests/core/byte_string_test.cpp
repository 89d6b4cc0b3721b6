// Strings are bytes: key values, config values and pinned values that are not UTF-8 are hashed and
// stored losslessly (as {"bytes": hex} in JSON) and read back equal; names that are not UTF-8 are
// refused with a tunekit::error naming them. No nlohmann exception escapes.

#include "test_support.hpp"

#include <tunekit/tunekit.hpp>

#include <gtest/gtest.h>

#include <memory>
#include <string>

using tunekit::config;
using tunekit::config_space;
using tunekit::key;
using tunekit::source;
using tunekit_test::log_capture;
using tunekit_test::temp_dir;

namespace {

const std::string latin1 = "caf\xe9"; // not UTF-8
const std::string broken =
    "\xff\xfe\xc3(\xed\xa0\x80"; // invalid starts, a bad continuation, a surrogate

bool has(const std::string &text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

double cost(const config &c, const key & /*k*/) {
  return (c.get_int("BLOCK") == 512 ? 1.0 : 2.0) + (c.get_string("name") == latin1 ? 0.0 : 0.5);
}

struct outcome {
  source src = source::disabled;
  std::size_t measured = 0;
  std::string name;
  std::string tag;
};

class byte_string_test : public ::testing::Test {
protected:
  // A fresh tuner (a new process state) called once; the key holds `key_text`, the config space a
  // string parameter with a Latin-1 value, and the call pins `tag` = `pinned`.
  outcome tune(const std::string &key_text, const std::string &pinned) {
    auto meas = std::make_shared<tunekit::simulated_measurer>(cost, 0.0, 3);
    auto o = tunekit_test::options(cache.path(), meas, log);
    auto f = tunekit::autotune(
        "bytes.fn",
        config_space::product({{"BLOCK", {256, 512}}, {"name", {std::string("plain"), latin1}}}),
        [key_text](int n) {
          return key{n, key_text};
        },
        [](const config & /*c*/, int /*n*/) { return true; },
        [](int /*n*/, const config &c) { return c.get_string("name") + "|" + c.get_string("tag"); },
        o);
    tunekit::call_options pin;
    pin.pinned = config{{"tag", pinned}};
    const std::string r = f.with(pin)(7);
    outcome out;
    out.src = f.tuner().last_source();
    out.measured = meas->candidates_measured();
    out.name = r.substr(0, r.find('|'));
    out.tag = r.substr(r.find('|') + 1);
    return out;
  }

  temp_dir cache;
  log_capture log;
};

} // namespace

TEST_F(byte_string_test, key_config_and_pinned_values_that_are_not_utf8_are_stored_and_hit) {
  const auto first = tune(latin1, broken);
  ASSERT_EQ(first.src, source::search) << log.dump();
  EXPECT_EQ(first.measured, 4U);
  EXPECT_EQ(first.name, latin1);
  EXPECT_EQ(first.tag, broken);
  EXPECT_TRUE(log.warnings().empty()) << log.dump();

  const auto entries = tunekit::winner_cache(cache.path()).list("bytes.fn");
  ASSERT_EQ(entries.size(), 1U);
  const std::string text = tunekit_test::read_text(entries[0]);
  EXPECT_TRUE(has(text, R"({"bytes":"636166e9"})") || has(text, R"("bytes": "636166e9")")) << text;
  const auto read = tunekit::winner_cache::read(entries[0]);
  ASSERT_EQ(read.status, tunekit::load_status::found) << read.detail;
  EXPECT_EQ(read.value->key, (key{7, latin1, "pinned tag", broken}));
  EXPECT_EQ(read.value->winner.get_string("name"), latin1);

  const auto second = tune(latin1, broken);
  EXPECT_EQ(second.src, source::cache) << log.dump();
  EXPECT_EQ(second.measured, 0U);
  EXPECT_EQ(second.name, latin1);
  EXPECT_EQ(second.tag, broken);
  EXPECT_TRUE(log.warnings().empty()) << log.dump();
}

TEST_F(byte_string_test, bytes_and_their_utf8_look_alikes_are_different_keys) {
  EXPECT_EQ(tune(latin1, "x").src, source::search);
  EXPECT_EQ(tune("caf\xc3\xa9", "x").src, source::search); // "café" in UTF-8
  EXPECT_EQ(tune("636166e9", "x").src, source::search);    // the hex text itself
  EXPECT_EQ(tune(latin1, "x").src, source::cache);
  EXPECT_EQ(tunekit::winner_cache(cache.path()).list("bytes.fn").size(), 3U);
}

TEST_F(byte_string_test, valid_utf8_strings_keep_their_json_form) {
  tune("caf\xc3\xa9 \xf0\x9f\x98\x80", "x");
  for (const auto &p : tunekit::winner_cache(cache.path()).list("bytes.fn")) {
    const std::string text = tunekit_test::read_text(p);
    EXPECT_TRUE(has(text, "\"caf\xc3\xa9 \xf0\x9f\x98\x80\"")) << text;
  }
}

TEST_F(byte_string_test, a_name_that_is_not_utf8_is_refused_with_a_tunekit_error_naming_it) {
  const auto e1 = tunekit_test::error_of([] {
    static_cast<void>(config_space::product({{latin1, {1, 2}}}));
  });
  EXPECT_TRUE(has(e1, "parameter name \"caf\\xE9\" is not valid UTF-8")) << e1;
  const auto e2 = tunekit_test::error_of([] {
    static_cast<void>(config_space{config{{latin1, 1}}});
  });
  EXPECT_TRUE(has(e2, "config field name \"caf\\xE9\" is not valid UTF-8")) << e2;
}

TEST_F(byte_string_test,
       a_function_name_or_pinned_name_that_is_not_utf8_never_escapes_a_library_error) {
  auto meas = std::make_shared<tunekit::simulated_measurer>(cost, 0.0, 3);
  auto o = tunekit_test::options(cache.path(), meas, log);
  auto space = config_space::product({{"BLOCK", {256, 512}}, {"name", {std::string("plain")}}});
  auto call = [&](const std::string &fn_name, const std::string &pin_name) {
    try {
      auto f = tunekit::autotune(
          fn_name, space, [](int n) { return key{n}; },
          [](const config & /*c*/, int /*n*/) { return true; },
          [](int n, const config & /*c*/) { return n; }, o);
      tunekit::call_options pin;
      pin.pinned = config{{pin_name, 1}};
      EXPECT_EQ(f.with(pin)(3), 3);
    } catch (const tunekit::error &e) {
      EXPECT_TRUE(has(e.what(), "not valid UTF-8")) << e.what();
    } catch (const std::exception &e) {
      ADD_FAILURE() << "non-tunekit exception " << typeid(e).name() << ": " << e.what();
    }
  };
  call(latin1, "tag");
  call("bytes.pin", latin1);
}

TEST(byte_string_json, a_bytes_object_that_is_not_hex_is_an_invalid_entry) {
  temp_dir dir;
  tunekit::cache_entry e;
  e.function = {"f", "v1"};
  e.hardware = tunekit_test::test_hardware();
  e.key = key{latin1};
  e.winner = config{{"BLOCK", 1}};
  tunekit::candidate_record c;
  c.config = e.winner;
  c.time_ms = 1.0;
  e.candidates.push_back(c);
  e.winner_index = 0;
  std::string text = tunekit::to_json(e);
  ASSERT_TRUE(has(text, "636166e9")) << text;
  EXPECT_EQ(tunekit::cache_entry_from_json(text).key, e.key);
  for (const char *bad : {"636166e", "636166E9", "63616zz9"}) {
    std::string spoiled = text;
    spoiled.replace(spoiled.find("636166e9"), 8, bad);
    const auto why =
        tunekit_test::error_of([&] { static_cast<void>(tunekit::cache_entry_from_json(spoiled)); });
    EXPECT_TRUE(has(why, "hex")) << bad << ": " << why;
  }
}
