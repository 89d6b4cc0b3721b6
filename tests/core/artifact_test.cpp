// Offline artifacts: identity and file format, and their place in the resolution order (memory,
// cache, artifact, default, search). Timings come from the simulated measurer.

#include "test_support.hpp"

#include <tunekit/artifact.hpp>
#include <tunekit/tunekit.hpp>

#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

using tunekit::artifact;
using tunekit::config;
using tunekit::config_space;
using tunekit::device_identity;
using tunekit::key;
using tunekit::source;
using tunekit_test::log_capture;
using tunekit_test::temp_dir;

namespace {

// BLOCK x num_warps; with block_cost, BLOCK=512, num_warps=4 is fastest.
config_space block_space() {
  return config_space::product({{"BLOCK", {256, 512, 1024, 2048}}, {"num_warps", {4, 8}}});
}

const config fastest{{"BLOCK", 512}, {"num_warps", 4}};
const config fallback{{"BLOCK", 256}, {"num_warps", 8}};
const config reviewed{{"BLOCK", 1024}, {"num_warps", 8}};

device_identity test_device() { return device_identity::of(tunekit_test::test_hardware()); }

class artifact_test : public ::testing::Test {
protected:
  // Options with their own cache and artifact directories.
  [[nodiscard]] tunekit::tuner_options opts(bool always_tune = false) const {
    auto o = tunekit_test::options(cache.path(), meas, log);
    o.process->env.artifact_dir = artifacts.path();
    o.process->env.always_tune = always_tune;
    o.artifact.name = "scale";
    o.artifact.key_names = {"n"};
    return o;
  }

  // `scale(n, config)` keyed by n, recording each config it runs with.
  auto make(tunekit::tuner_options o) {
    return tunekit::autotune(
        "scale", block_space(), [](int n) { return key{n}; }, tunekit::keep_all{},
        [calls = calls](int /*n*/, const config &c) {
          calls->push_back(c);
          return c.get_int("BLOCK");
        },
        std::move(o));
  }
  auto make_with_default(tunekit::tuner_options o) {
    return make(std::move(o)).with_default([defaults = defaults](int /*n*/) {
      ++*defaults;
      return fallback;
    });
  }

  // Writes the artifact of key {n} on the test device.
  std::filesystem::path put(int n, const config &c) const {
    artifact a;
    a.name = "scale";
    a.key = key{n};
    a.device = test_device();
    a.config = c;
    return tunekit::store_artifact(artifacts.path(), a);
  }
  [[nodiscard]] std::filesystem::path path_of(int n) const {
    return tunekit::artifact_path(artifacts.path(), "scale", key{n}, test_device());
  }
  [[nodiscard]] std::size_t artifact_files() const {
    return tunekit_test::files_below(artifacts.path()).size();
  }

  temp_dir cache;
  temp_dir artifacts;
  log_capture log;
  std::shared_ptr<tunekit::simulated_measurer> meas =
      std::make_shared<tunekit::simulated_measurer>(tunekit_test::block_cost);
  std::shared_ptr<std::vector<config>> calls = std::make_shared<std::vector<config>>();
  std::shared_ptr<int> defaults = std::make_shared<int>(0);
};

TEST(artifact_name, accepts_letters_digits_dot_underscore_dash_up_to_64) {
  EXPECT_TRUE(tunekit::is_valid_artifact_name("my_kernel-v1.2"));
  EXPECT_TRUE(tunekit::is_valid_artifact_name(std::string(64, 'a')));
  EXPECT_FALSE(tunekit::is_valid_artifact_name(""));
  EXPECT_FALSE(tunekit::is_valid_artifact_name(std::string(65, 'a')));
  EXPECT_FALSE(tunekit::is_valid_artifact_name("a/b"));
  EXPECT_FALSE(tunekit::is_valid_artifact_name("a b"));
}

TEST_F(artifact_test, invalid_name_is_refused_when_the_tuner_is_built) {
  auto o = opts();
  o.artifact.name = "../escape";
  EXPECT_THROW(static_cast<void>(make(o)), tunekit::error);
}

TEST(artifact_format, emit_is_byte_identical_and_load_keeps_types) {
  temp_dir dir;
  artifact a;
  a.name = "typed";
  a.key = key{4096, "float32", 0.5, true};
  a.key_names = {"n", "dtype", "alpha", "inplace"};
  a.device = test_device();
  a.config = config{{"BLOCK", 256}, {"ratio", 256.0}, {"fast", true}, {"mode", "tiled"}};
  a.config.set_template_id("tiled_v2");
  const auto path = tunekit::store_artifact(dir.path(), a);
  const std::string first = tunekit_test::read_text(path);
  ASSERT_EQ(tunekit::store_artifact(dir.path(), a), path);
  EXPECT_EQ(tunekit_test::read_text(path), first);
  EXPECT_EQ(tunekit_test::files_below(dir.path()).size(), 1U);
  EXPECT_EQ(path.filename().string(),
            "typed-" + tunekit::artifact_digest("typed", a.key, a.device) + ".json");

  const artifact b = tunekit::artifact_from_json(first);
  EXPECT_EQ(b.name, a.name);
  EXPECT_EQ(b.key, a.key);
  EXPECT_EQ(b.key_names, a.key_names);
  EXPECT_EQ(b.device, a.device);
  EXPECT_EQ(b.config, a.config);
  EXPECT_TRUE(b.config.at("BLOCK").is_int());
  EXPECT_TRUE(b.config.at("ratio").is_double());
  EXPECT_EQ(tunekit::to_json(b), first);
  EXPECT_EQ(tunekit::artifact_file_problem(path), "");
}

TEST(artifact_format, identity_covers_name_key_types_and_device) {
  const auto d = test_device();
  const auto base = tunekit::artifact_digest("k", key{256}, d);
  EXPECT_NE(base, tunekit::artifact_digest("k2", key{256}, d));
  EXPECT_NE(base, tunekit::artifact_digest("k", key{512}, d));
  EXPECT_NE(base, tunekit::artifact_digest("k", key{256.0}, d));
  for (auto other :
       {device_identity{"Other CPU", d.arch, d.units}, device_identity{d.name, "aarch64", d.units},
        device_identity{d.name, d.arch, d.units + 1}}) {
    EXPECT_NE(base, tunekit::artifact_digest("k", key{256}, other));
  }
}

TEST(artifact_format, a_renamed_file_is_reported_by_the_file_check) {
  temp_dir dir;
  artifact a;
  a.name = "k";
  a.key = key{1};
  a.device = test_device();
  a.config = config{{"BLOCK", 256}};
  const auto path = tunekit::store_artifact(dir.path(), a);
  const auto renamed = dir.path() / "k-0000.json";
  std::filesystem::rename(path, renamed);
  EXPECT_NE(tunekit::artifact_file_problem(renamed).find("identity"), std::string::npos);
}

TEST_F(artifact_test, default_answers_without_searching) {
  auto f = make_with_default(opts());
  EXPECT_EQ(f(4096), 256);
  EXPECT_EQ(f.tuner().last_source(), source::default_config);
  EXPECT_EQ(f(4096), 256); // memory now
  EXPECT_EQ(*defaults, 1);
  EXPECT_EQ(f.tuner().searches(), 0U);
  EXPECT_EQ(meas->candidates_measured(), 0U);
  EXPECT_EQ(tunekit_test::files_below(cache.path()).size(), 0U);
}

TEST_F(artifact_test, cache_beats_artifact_beats_default_beats_search) {
  { // no default, no artifact: search (and a cache entry for key 1)
    auto f = make(opts());
    EXPECT_EQ(f(1), 512);
    EXPECT_EQ(f.tuner().last_source(), source::search);
    EXPECT_EQ(artifact_files(), 0U) << "a normal search writes no artifact";
  }
  put(1, reviewed);
  put(2, reviewed);
  auto f = make_with_default(opts());
  EXPECT_EQ(f(1), 512);
  EXPECT_EQ(f.tuner().last_source(), source::cache);
  EXPECT_EQ(f(2), 1024);
  EXPECT_EQ(f.tuner().last_source(), source::artifact);
  EXPECT_EQ(f(3), 256);
  EXPECT_EQ(f.tuner().last_source(), source::default_config);
  EXPECT_EQ(f.tuner().searches(), 0U);
  EXPECT_EQ(*defaults, 1);
}

TEST_F(artifact_test, artifacts_are_only_read_with_an_artifact_dir) {
  put(2, reviewed);
  auto o = opts();
  o.process->env.artifact_dir.clear();
  auto f = make_with_default(o);
  EXPECT_EQ(f(2), 256);
  EXPECT_EQ(f.tuner().last_source(), source::default_config);
}

TEST_F(artifact_test, forced_tuning_bypasses_all_and_writes_exactly_one_artifact) {
  { // a cached winner for key 7 that forced tuning must not serve
    auto f = make(opts());
    static_cast<void>(f(7));
  }
  put(7, reviewed);
  const auto before = meas->candidates_measured();
  auto f = make_with_default(opts(/*always_tune=*/true));
  EXPECT_EQ(f(7), 512);
  EXPECT_EQ(f.tuner().last_source(), source::search);
  EXPECT_EQ(meas->candidates_measured() - before, block_space().size());
  EXPECT_EQ(*defaults, 0);
  ASSERT_EQ(artifact_files(), 1U);
  const auto a = tunekit::artifact_from_json(tunekit_test::read_text(path_of(7)));
  EXPECT_EQ(a.config, fastest);
  EXPECT_EQ(a.key_names, std::vector<std::string>{"n"});

  // The winner cache is updated, and a re-emit of the same winner is byte-identical.
  const std::string first = tunekit_test::read_text(path_of(7));
  auto g = make(opts(/*always_tune=*/true));
  EXPECT_EQ(g(7), 512);
  EXPECT_EQ(tunekit_test::read_text(path_of(7)), first);
  EXPECT_EQ(artifact_files(), 1U);

  // A normal tuner now serves the artifact only where the cache does not answer.
  auto h = make(opts());
  EXPECT_EQ(h(7), 512);
  EXPECT_EQ(h.tuner().last_source(), source::cache);
}

TEST_F(artifact_test, forced_artifact_serves_a_fresh_machine) {
  {
    auto f = make(opts(/*always_tune=*/true));
    static_cast<void>(f(9));
  }
  temp_dir other_cache;
  auto o = opts();
  o.process->env.cache_dir = other_cache.path();
  auto f = make(o);
  const auto measured = meas->candidates_measured();
  EXPECT_EQ(f(9), 512);
  EXPECT_EQ(f.tuner().last_source(), source::artifact);
  EXPECT_EQ(meas->candidates_measured(), measured);
}

TEST_F(artifact_test, forced_tuning_without_a_device_identity_fails_and_caches_nothing) {
  auto o = opts(/*always_tune=*/true);
  o.hardware = tunekit::hardware_info{"host", "", "x86_64", 8, 1};
  auto f = make(o);
  EXPECT_THROW(static_cast<void>(f(1)), tunekit::error);
  EXPECT_EQ(f.tuner().find(key{1}), nullptr);
  EXPECT_EQ(tunekit_test::files_below(cache.path()).size(), 0U);
  EXPECT_EQ(artifact_files(), 0U);
}

TEST_F(artifact_test, forced_tuning_that_cannot_write_fails_and_caches_nothing) {
  auto o = opts(/*always_tune=*/true);
  o.process->env.artifact_dir = artifacts.path() / "blocked";
  tunekit_test::write_text(o.process->env.artifact_dir, "a file where the directory should be");
  auto f = make(o);
  try {
    static_cast<void>(f(1));
    FAIL() << "expected an error";
  } catch (const tunekit::error &e) {
    EXPECT_NE(std::string(e.what()).find("artifact"), std::string::npos) << e.what();
  }
  EXPECT_EQ(f.tuner().find(key{1}), nullptr);
  EXPECT_EQ(tunekit_test::files_below(cache.path()).size(), 0U);
}

// Each kind of bad artifact is ignored with a warning; the default answers.
TEST_F(artifact_test, invalid_artifacts_fall_back_to_the_default) {
  struct bad_case {
    const char *what;
    std::function<void(const std::filesystem::path &)> make_bad;
    const char *warning;
  };
  const auto rewrite = [](const std::filesystem::path &p, const std::string &from,
                          const std::string &to) {
    std::string text = tunekit_test::read_text(p);
    const auto at = text.find(from);
    ASSERT_NE(at, std::string::npos) << text;
    text.replace(at, from.size(), to);
    tunekit_test::write_text(p, text);
  };
  const std::vector<bad_case> cases = {
      {"missing", [](const std::filesystem::path &) {}, "no such file"},
      {"unreadable", [](const std::filesystem::path &p) { tunekit_test::write_text(p, "{\"sch"); },
       "not valid JSON"},
      {"mismatched",
       [&](const std::filesystem::path &p) {
         std::filesystem::rename(put(99, reviewed), p); // another key's artifact under this name
       },
       "holds key"},
      {"wrong structure",
       [&](const std::filesystem::path &p) {
         put(1, reviewed);
         rewrite(p, "\"config\"", "\"settings\"");
       },
       "unknown member"},
      {"type change",
       [&](const std::filesystem::path &p) {
         put(1, reviewed);
         rewrite(p, "1024", "1024.0");
       },
       "type"},
      {"key axis",
       [&](const std::filesystem::path &) {
         put(1, config{{"BLOCK", 1024}, {"n", 1}});
       },
       "key axis 'n'"},
      {"not in the space",
       [&](const std::filesystem::path &) {
         put(1, config{{"BLOCK", 128}, {"num_warps", 4}});
       },
       "not a config of the config space"},
  };
  for (const auto &c : cases) {
    SCOPED_TRACE(c.what);
    std::filesystem::remove_all(artifacts.path());
    std::filesystem::create_directories(artifacts.path());
    c.make_bad(path_of(1));
    log.clear();
    *defaults = 0;
    auto f = make_with_default(opts());
    EXPECT_EQ(f(1), 256);
    EXPECT_EQ(f.tuner().last_source(), source::default_config);
    EXPECT_EQ(*defaults, 1);
    EXPECT_EQ(log.count(tunekit::log_level::warning, {"ignoring artifact", c.warning}), 1U)
        << log.dump();
  }
}

TEST_F(artifact_test, an_artifact_may_not_set_a_pinned_value) {
  // With allow_arg_overwrite, num_warps pinned to 8 is part of the key and not tuned.
  tunekit::call_options pin;
  pin.allow_arg_overwrite = true;
  pin.pinned = config{{"num_warps", 8}};
  key k{1};
  k.push_back("pinned num_warps"); // pinned values extend the key as ("pinned NAME", value)
  k.push_back(8);
  artifact a;
  a.name = "scale";
  a.key = k;
  a.device = test_device();
  a.config = config{{"BLOCK", 1024}, {"num_warps", 8}};
  tunekit::store_artifact(artifacts.path(), a);
  auto f = make_with_default(opts());
  EXPECT_EQ(f.with(pin)(1), 256);
  EXPECT_EQ(f.tuner().last_source(), source::default_config);
  EXPECT_EQ(log.count(tunekit::log_level::warning, {"which the caller pinned"}), 1U) << log.dump();

  // Without the pinned field, the same artifact is served, completed by the pin.
  a.config = config{{"BLOCK", 1024}};
  tunekit::store_artifact(artifacts.path(), a);
  auto g = make_with_default(opts());
  EXPECT_EQ(g.with(pin)(1), 1024);
  EXPECT_EQ(g.tuner().last_source(), source::artifact);
  EXPECT_EQ(calls->back(), reviewed);
}

TEST_F(artifact_test, forced_tuning_with_a_pin_leaves_it_out_of_the_artifact) {
  tunekit::call_options pin;
  pin.allow_arg_overwrite = true;
  pin.pinned = config{{"num_warps", 8}};
  auto f = make(opts(/*always_tune=*/true));
  EXPECT_EQ(f.with(pin)(1), 512);
  const auto files = tunekit_test::files_below(artifacts.path());
  ASSERT_EQ(files.size(), 1U);
  const auto a = tunekit::artifact_from_json(tunekit_test::read_text(files[0]));
  EXPECT_EQ(a.config, (config{{"BLOCK", 512}}));
}

TEST_F(artifact_test, errors_of_an_accepted_artifact_propagate_without_retry) {
  put(1, reviewed);
  int runs = 0;
  auto f = tunekit::autotune(
               "scale", block_space(), [](int n) { return key{n}; }, tunekit::keep_all{},
               [&runs](int /*n*/, const config &c) -> int {
                 ++runs;
                 if (c.get_int("BLOCK") == 1024) {
                   throw std::runtime_error("launch failed");
                 }
                 return 0;
               },
               opts())
               .with_default([defaults = defaults](int) {
                 ++*defaults;
                 return fallback;
               });
  EXPECT_THROW(static_cast<void>(f(1)), std::runtime_error);
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(*defaults, 0);
  EXPECT_EQ(f.tuner().last_source(), source::artifact);
}

TEST_F(artifact_test, a_default_outside_the_space_is_an_error) {
  auto f = make(opts()).with_default([](int) { return config{{"BLOCK", 3}, {"num_warps", 4}}; });
  try {
    static_cast<void>(f(1));
    FAIL() << "expected an error";
  } catch (const tunekit::error &e) {
    EXPECT_NE(std::string(e.what()).find("default_fn"), std::string::npos) << e.what();
  }
}

TEST_F(artifact_test, default_field_order_does_not_matter_and_check_is_kept) {
  auto f = make(opts()).with_check([](int, const config &) { return true; }).with_default([](int) {
    return config{{"num_warps", 8}, {"BLOCK", 1024}};
  });
  EXPECT_EQ(f(5), 1024);
  EXPECT_EQ(calls->back(), reviewed);
}

} // namespace

TEST_F(artifact_test, make_artifact_from_a_pinned_entry_leaves_the_pin_out_and_is_served) {
  tunekit::call_options pin;
  pin.allow_arg_overwrite = true;
  pin.pinned = config{{"num_warps", 8}};
  auto tuned = make(opts());
  EXPECT_EQ(tuned.with(pin)(1), 512);
  const auto entries = tunekit::winner_cache(cache.path()).list("scale");
  ASSERT_EQ(entries.size(), 1U);
  const auto entry = tunekit::winner_cache::read(entries[0]);
  ASSERT_TRUE(entry.found()) << entry.detail;

  const artifact a = tunekit::make_artifact("scale", *entry.value, {"n"});
  EXPECT_EQ(a.config, (config{{"BLOCK", 512}}));
  EXPECT_EQ(a.key, entry.value->key);
  EXPECT_EQ(a.key_names, (std::vector<std::string>{"n", "pinned num_warps", "num_warps"}));
  EXPECT_EQ(a.device, test_device());
  tunekit::store_artifact(artifacts.path(), a);

  // A machine without the cache serves it, completed by the pin, measuring nothing.
  temp_dir fresh;
  auto o = opts();
  o.process->env.cache_dir = fresh.path();
  auto f = make(o);
  const auto measured = meas->candidates_measured();
  EXPECT_EQ(f.with(pin)(1), 512);
  EXPECT_EQ(f.tuner().last_source(), source::artifact);
  EXPECT_EQ(calls->back(), (config{{"BLOCK", 512}, {"num_warps", 8}}));
  EXPECT_EQ(meas->candidates_measured(), measured);
}

TEST(make_artifact, keeps_the_template_id_and_checks_name_and_key_names) {
  tunekit::cache_entry e;
  e.function = {"gemm", "v1"};
  e.key = key{4096, "f32"};
  e.hardware = tunekit_test::test_hardware();
  e.winner = config{{"BLOCK", 64}};
  e.winner.set_template_id("tiled");
  e.candidates = {{e.winner, tunekit::candidate_status::ok, 0.5, {}, ""}};

  const artifact a = tunekit::make_artifact("gemm", e);
  EXPECT_EQ(a.config.template_id(), "tiled");
  EXPECT_EQ(a.config, e.winner);
  EXPECT_TRUE(a.key_names.empty());
  EXPECT_EQ(tunekit::make_artifact("gemm", e, {"n", "dtype"}).key_names,
            (std::vector<std::string>{"n", "dtype"}));

  try {
    static_cast<void>(tunekit::make_artifact("gemm", e, {"n"}));
    FAIL() << "no error";
  } catch (const tunekit::error &err) {
    const std::string msg = err.what();
    EXPECT_NE(msg.find("1 key names (n) for the key (4096, \"f32\") of 2 values"),
              std::string::npos)
        << msg;
  }
  try {
    static_cast<void>(tunekit::make_artifact("bad name", e));
    FAIL() << "no error";
  } catch (const tunekit::error &err) {
    EXPECT_NE(std::string(err.what()).find("invalid artifact name 'bad name'"), std::string::npos)
        << err.what();
  }
}
