// Lookup tables: the file format, the key schema, and their place in the resolution order
// (device-specific before agnostic, template filtering, one choice vs several).

#include "test_support.hpp"

#include <tunekit/lookup_table.hpp>
#include <tunekit/tunekit.hpp>

#include <gtest/gtest.h>

#include <limits>
#include <memory>
#include <string>
#include <vector>

using tunekit::config;
using tunekit::config_space;
using tunekit::key;
using tunekit::lookup_table;
using tunekit::source;
using tunekit_test::log_capture;
using tunekit_test::temp_dir;

namespace {

// Two templates: "tiled" with BLOCK in {256, 512, 1024, 2048} and "flat" with BLOCK 64.
// With block_cost, tiled BLOCK=512 is fastest.
config_space templated_space() {
  std::vector<config> cs;
  for (int b : {256, 512, 1024, 2048}) {
    config c{{"BLOCK", b}};
    c.set_template_id("tiled");
    cs.push_back(c);
  }
  config flat{{"BLOCK", 64}};
  flat.set_template_id("flat");
  cs.push_back(flat);
  return config_space(std::move(cs));
}

double cost(const config &c, const key &k) {
  return c.get_int("BLOCK") == 64 ? 5.0 : tunekit_test::block_cost(c, k);
}

config tiled(int block) {
  config c{{"BLOCK", block}};
  c.set_template_id("tiled");
  return c;
}

constexpr const char *device = "Test CPU 9000"; // tunekit_test::test_hardware().name

using entry_list = std::vector<tunekit::table_entry>;

tunekit::table_entry entry(const config &c, std::string hash = "") {
  return tunekit::table_entry{c, std::move(hash)};
}

class lookup_table_test : public ::testing::Test {
protected:
  [[nodiscard]] tunekit::tuner_options opts(const lookup_table &t) const {
    auto o = tunekit_test::options(cache.path(), meas, log);
    o.table.lookup_table = std::make_shared<const lookup_table>(t);
    o.table.op_name = "scale_op";
    o.table.template_hashes = {{"tiled", "hash-now"}};
    return o;
  }
  auto make(tunekit::tuner_options o) {
    return tunekit::autotune(
        "scale", templated_space(),
        [](int n, const char *dtype) {
          return key{n, dtype};
        },
        tunekit::keep_all{},
        [](int /*n*/, const char * /*dtype*/, const config &c) { return c.get_int("BLOCK"); },
        std::move(o));
  }
  // The table key of a call (4096, "float32"), with or without the device.
  static std::string tk(bool with_device, const std::string &params = "") {
    return tunekit::table_key(with_device ? device : "", key{4096, "float32"}, params, "scale_op");
  }
  static lookup_table table(const std::vector<std::pair<std::string, entry_list>> &rows) {
    lookup_table t;
    for (const auto &[k, es] : rows) {
      for (const auto &e : es) {
        t.add(k, e);
      }
    }
    return t;
  }

  temp_dir cache;
  log_capture log;
  std::shared_ptr<tunekit::simulated_measurer> meas =
      std::make_shared<tunekit::simulated_measurer>(cost);
};

TEST(table_format, keys_follow_the_schema) {
  EXPECT_EQ(tunekit::table_key("NVIDIA H200", key{128, "float16"}, "alpha=1&beta=0", "addmm"),
            "NVIDIA H200+(128, \"float16\")+alpha=1&beta=0+addmm");
  EXPECT_EQ(tunekit::table_key("", key{128}, "", "mm"), "(128)+mm");
  EXPECT_EQ(tunekit::table_params(config{{"beta", 0}, {"alpha", 1.5}, {"mode", "fast"}}),
            "alpha=1.5&beta=0&mode=\"fast\"");
  EXPECT_EQ(tunekit::table_params(config{}), "");
}

TEST(table_format, round_trip_keeps_types) {
  const std::string text = R"({
  "(1)+mm": [
    {
      "template_id": "tiled",
      "BLOCK": 256,
      "ratio": 256.0,
      "fast": true,
      "acc": "float32",
      "template_hash": "abc"
    },
    {
      "template_id": "aten"
    }
  ]
}
)";
  const auto t = lookup_table::from_json(text);
  ASSERT_EQ(t.size(), 1U);
  const auto *entries = t.find("(1)+mm");
  ASSERT_NE(entries, nullptr);
  ASSERT_EQ(entries->size(), 2U);
  const auto &e = (*entries)[0];
  EXPECT_EQ(e.choice.template_id(), "tiled");
  EXPECT_EQ(e.template_hash, "abc");
  EXPECT_TRUE(e.choice.at("BLOCK").is_int());
  EXPECT_TRUE(e.choice.at("ratio").is_double());
  EXPECT_TRUE(e.choice.at("fast").is_bool());
  EXPECT_EQ(e.choice.get_string("acc"), "float32");
  EXPECT_TRUE((*entries)[1].choice.empty());
  EXPECT_EQ(t.to_json(), text);
  EXPECT_EQ(lookup_table::from_json(t.to_json()).to_json(), text);
  EXPECT_EQ(t.find("(2)+mm"), nullptr);
}

TEST(table_format, bad_entries_are_errors_naming_the_key) {
  for (const char *bad : {R"({"(1)+mm": [42]})", R"({"(1)+mm": [{"BLOCK": 1}]})",
                          R"({"(1)+mm": [{"template_id": 7}]})", R"({"(1)+mm": {"x": 1}})",
                          R"({"(1)+mm": [{"template_id": null}]})",
                          R"({"(1)+mm": [{"template_id": "t", "template_hash": 7}]})",
                          R"({"(1)+mm": [{"template_id": "t", "BLOCK": [1]}]})"}) {
    SCOPED_TRACE(bad);
    try {
      static_cast<void>(lookup_table::from_json(bad));
      FAIL() << "expected an error";
    } catch (const tunekit::error &e) {
      EXPECT_NE(std::string(e.what()).find("(1)+mm"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(static_cast<void>(lookup_table::from_json("[1]")), tunekit::error);
  EXPECT_THROW(static_cast<void>(lookup_table::from_json("{")), tunekit::error);
}

TEST_F(lookup_table_test, one_entry_is_used_without_measuring) {
  auto f = make(opts(table({{tk(false), {entry(tiled(1024))}}})));
  EXPECT_EQ(f(4096, "float32"), 1024);
  EXPECT_EQ(f.tuner().last_source(), source::table);
  EXPECT_EQ(f(4096, "float32"), 1024);
  EXPECT_EQ(meas->candidates_measured(), 0U);
  EXPECT_EQ(f.tuner().searches(), 0U);
}

TEST_F(lookup_table_test, several_entries_are_searched_among_only) {
  auto f = make(opts(table({{tk(false), {entry(tiled(2048)), entry(tiled(1024))}}})));
  EXPECT_EQ(f(4096, "float32"), 1024);
  EXPECT_EQ(f.tuner().last_source(), source::table_search);
  EXPECT_EQ(meas->candidates_measured(), 2U);
  const auto last = f.tuner().last_search();
  ASSERT_TRUE(last.has_value());
  std::size_t measured = 0;
  for (const auto &r : last->candidates) {
    measured += r.status == tunekit::candidate_status::ok ? 1 : 0;
  }
  EXPECT_EQ(measured, 2U);
}

TEST_F(lookup_table_test, device_specific_entry_wins_over_agnostic) {
  auto f = make(opts(table({{tk(false), {entry(tiled(2048))}}, {tk(true), {entry(tiled(256))}}})));
  EXPECT_EQ(f(4096, "float32"), 256);
  EXPECT_EQ(f.tuner().last_source(), source::table);

  // Another device only sees the agnostic entry.
  auto o = opts(table({{tk(false), {entry(tiled(2048))}}, {tk(true), {entry(tiled(256))}}}));
  o.hardware = tunekit::hardware_info{"host", "Other CPU", "x86_64", 8, 1};
  auto g = make(o);
  EXPECT_EQ(g(4096, "float32"), 2048);
  EXPECT_EQ(meas->candidates_measured(), 0U);
}

TEST_F(lookup_table_test, stale_hash_is_filtered_and_entries_without_hash_stay) {
  auto f = make(opts(table(
      {{tk(true),
        {entry(tiled(256), "hash-old"), entry(tiled(2048), "hash-now"), entry(tiled(1024))}}})));
  EXPECT_EQ(f(4096, "float32"), 1024);
  EXPECT_EQ(meas->candidates_measured(), 2U);
  EXPECT_EQ(log.count(tunekit::log_level::warning, {"stale", "hash-old"}), 1U) << log.dump();
}

TEST_F(lookup_table_test, unknown_templates_are_ignored_then_agnostic_key_is_tried) {
  config other{{"BLOCK", 256}};
  other.set_template_id("aten::mm");
  auto f = make(opts(table({{tk(true), {entry(other)}}, {tk(false), {entry(tiled(2048))}}})));
  EXPECT_EQ(f(4096, "float32"), 2048);
  EXPECT_EQ(f.tuner().last_source(), source::table);
}

TEST_F(lookup_table_test, no_match_continues_the_normal_resolution) {
  auto f = make(opts(table({{tk(true), {entry(tiled(256))}}})));
  EXPECT_EQ(f(8192, "float32"), 512);
  EXPECT_EQ(f.tuner().last_source(), source::search);
  EXPECT_EQ(meas->candidates_measured(), templated_space().size());
}

TEST_F(lookup_table_test, entries_outside_the_space_are_dropped_with_a_warning) {
  auto f = make(opts(table({{tk(true), {entry(tiled(3))}}})));
  EXPECT_EQ(f(4096, "float32"), 512);
  EXPECT_EQ(f.tuner().last_source(), source::search);
  EXPECT_EQ(log.count(tunekit::log_level::warning, {"not a config of the space"}), 1U)
      << log.dump();
}

TEST_F(lookup_table_test, table_beats_default_and_cache_beats_table) {
  auto t = table({{tk(true), {entry(tiled(2048))}}});
  {
    auto f = make(opts(t)).with_default([](int, const char *) { return tiled(256); });
    EXPECT_EQ(f(4096, "float32"), 2048);
    EXPECT_EQ(f.tuner().last_source(), source::table);
  }
  { // a search for another key fills the cache; the table is not consulted for that key
    auto f = make(tunekit_test::options(cache.path(), meas, log));
    EXPECT_EQ(f(4096, "float16"), 512);
  }
  auto t2 = table(
      {{tunekit::table_key(device, key{4096, "float16"}, "", "scale_op"), {entry(tiled(2048))}}});
  auto g = make(opts(t2));
  EXPECT_EQ(g(4096, "float16"), 512);
  EXPECT_EQ(g.tuner().last_source(), source::cache);
}

TEST_F(lookup_table_test, additional_params_and_pins_are_part_of_the_key) {
  auto o = opts(table({{tk(true, "alpha=1&beta=0"), {entry(tiled(1024))}}}));
  o.table.params = config{{"alpha", 1}};
  auto f = make(o);
  tunekit::call_options pin;
  pin.pinned = config{{"beta", 0}};
  EXPECT_EQ(f.with(pin)(4096, "float32"), 1024);
  EXPECT_EQ(f.tuner().last_source(), source::table);
}

TEST_F(lookup_table_test, table_from_the_environment_is_read_once_at_build) {
  temp_dir dir;
  const auto file = dir.path() / "table.json";
  tunekit_test::write_text(file, table({{tk(true), {entry(tiled(2048))}}}).to_json());
  auto o = tunekit_test::options(cache.path(), meas, log);
  o.process->env.lookup_table = file;
  o.table.op_name = "scale_op";
  auto f = make(o);
  ASSERT_NE(f.tuner().table(), nullptr);
  std::filesystem::remove(file);
  EXPECT_EQ(f(4096, "float32"), 2048);
  EXPECT_EQ(f.tuner().last_source(), source::table);

  tunekit_test::write_text(file, R"({"k": [{"BLOCK": 1}]})");
  try {
    static_cast<void>(make(o));
    FAIL() << "expected an error";
  } catch (const tunekit::error &e) {
    EXPECT_NE(std::string(e.what()).find("template_id"), std::string::npos) << e.what();
  }
}

} // namespace

namespace {

// The valid entries of the winner cache at `root`.
std::vector<tunekit::cache_entry> entries_in(const std::filesystem::path &root) {
  std::vector<tunekit::cache_entry> out;
  for (const auto &p : tunekit::winner_cache(root).list()) {
    auto r = tunekit::winner_cache::read(p);
    if (r.found()) {
      out.push_back(std::move(*r.value));
    }
  }
  return out;
}

TEST_F(lookup_table_test, from_entries_ranks_valid_candidates_and_a_tuner_serves_the_table) {
  auto o = opts(lookup_table{});
  o.table.template_hashes.clear();
  o.table.params = config{{"alpha", 1}};
  tunekit::call_options pin;
  pin.pinned = config{{"beta", 0}};
  static_cast<void>(make(o).with(pin)(4096, "float32"));
  const auto entries = entries_in(cache.path());
  ASSERT_EQ(entries.size(), 1U);

  const auto t = lookup_table::from_entries(entries, "scale_op", 2, config{{"alpha", 1}},
                                            {{"tiled", "hash-now"}});
  ASSERT_EQ(t.size(), 1U);
  const auto *row = t.find(tk(true, "alpha=1&beta=0"));
  ASSERT_NE(row, nullptr) << t.to_json();
  EXPECT_EQ(*row, (entry_list{entry(tiled(512), "hash-now"), entry(tiled(1024), "hash-now")}));

  // The top choice alone, served to a fresh tuner without measuring.
  temp_dir fresh;
  auto served = opts(lookup_table::from_entries(entries, "scale_op", 1, config{{"alpha", 1}}));
  served.process->env.cache_dir = fresh.path();
  served.table.params = config{{"alpha", 1}};
  const auto measured = meas->candidates_measured();
  auto f = make(served);
  EXPECT_EQ(f.with(pin)(4096, "float32"), 512);
  EXPECT_EQ(f.tuner().last_source(), source::table);
  EXPECT_EQ(meas->candidates_measured(), measured);
}

TEST_F(lookup_table_test, from_entries_op_defaults_to_the_function_and_failures_are_left_out) {
  tunekit::cache_entry e;
  e.function = {"gemm", "v1"};
  e.key = key{8};
  e.hardware = tunekit_test::test_hardware();
  e.candidates = {{tiled(256),
                   tunekit::candidate_status::failed,
                   std::numeric_limits<double>::infinity(),
                   {},
                   "boom"},
                  {tiled(512), tunekit::candidate_status::ok, 2.0, {}, ""},
                  {tiled(1024), tunekit::candidate_status::ok, 1.0, {}, ""}};
  const auto t = lookup_table::from_entries({e}, "", 5);
  const auto *row = t.find(tunekit::table_key(device, key{8}, "", "gemm"));
  ASSERT_NE(row, nullptr) << t.to_json();
  EXPECT_EQ(*row, (entry_list{entry(tiled(1024)), entry(tiled(512))}));

  auto other = e;
  other.function.version = "v2";
  try {
    static_cast<void>(lookup_table::from_entries({e, other}, "", 1));
    FAIL() << "no error";
  } catch (const tunekit::error &err) {
    EXPECT_NE(std::string(err.what()).find("version 'v2'"), std::string::npos) << err.what();
  }
  EXPECT_THROW(static_cast<void>(lookup_table::from_entries({e}, "", 0)), tunekit::error);
}

} // namespace

// PyTorch Inductor's lookup tables (shared/seeds/001): its key text, its nulls, its template ids.
namespace {

using tunekit::table_key_format;

// The seed's example table verbatim, its trailing comma (not JSON) removed: tests/core/data.
const std::string seed_table =
    tunekit_test::read_text(TUNEKIT_TEST_DATA_DIR "/inductor_seed_table.json");
constexpr const char *seed_input =
    "((torch.float16, [128, 256], [0, 1]), (torch.float16, [128, 64], [64, 1]), "
    "(torch.float16, [64, 256], [256, 1]))";
constexpr const char *seed_hash =
    "0717af5834e39dcca7ea817f896b8d85b4886422da7a3ab5f6911b4cfe568896";
// What Inductor gave a 512x512 fp16 mm (torch 2.11, H200).
constexpr const char *mm_input =
    "((torch.float16, [512, 512], [512, 1]), (torch.float16, [512, 512], [512, 1]))";

// A config of Inductor's triton::mm template with the seed's fields (hint_override is null there,
// so it is no field).
config triton_mm(int block_m) {
  config c{{"EVEN_K", true},  {"USE_FAST_ACCUM", false}, {"ACC_TYPE", "tl.float32"},
           {"num_stages", 2}, {"num_warps", 4},          {"BLOCK_M", block_m},
           {"BLOCK_N", 32},   {"BLOCK_K", 64},           {"GROUP_M", 8}};
  c.set_template_id("triton::mm");
  return c;
}

config bias_addmm() {
  config c;
  c.set_template_id("aten::bias_addmm");
  return c;
}

// triton::mm with BLOCK_M in {16, 32, 64, 128} (64 fastest), then aten::bias_addmm (slowest).
config_space mm_space() {
  std::vector<config> cs;
  for (int b : {16, 32, 64, 128}) {
    cs.push_back(triton_mm(b));
  }
  cs.push_back(bias_addmm());
  return config_space(std::move(cs));
}

double mm_cost(const config &c, const key & /*k*/) {
  if (!c.contains("BLOCK_M")) {
    return 9.0;
  }
  const auto b = c.get_int("BLOCK_M");
  return b == 64 ? 1.0 : b == 32 ? 2.0 : 3.0;
}

class inductor_table_test : public ::testing::Test {
protected:
  // A tuner keyed by Inductor's input key (one string value, as tunekit.inductor_input_key
  // gives it), looking tables up in `format`.
  [[nodiscard]] tunekit::tuner_options opts(std::shared_ptr<const lookup_table> t,
                                            table_key_format format = table_key_format::inductor,
                                            const std::string &op = "mm") const {
    auto o = tunekit_test::options(cache.path(), meas, log);
    o.table.lookup_table = std::move(t);
    o.table.op_name = op;
    o.table.key_format = format;
    if (op == "addmm") {
      o.table.params = config{{"alpha", 1}, {"beta", 1}};
    }
    return o;
  }
  static auto make(tunekit::tuner_options o) {
    return tunekit::autotune(
        "mm", mm_space(), [](const std::string &input) { return key{input}; }, tunekit::keep_all{},
        [](const std::string & /*input*/, const config &c) {
          return c.contains("BLOCK_M") ? c.get_int("BLOCK_M") : std::int64_t{0};
        },
        std::move(o));
  }
  static std::shared_ptr<const lookup_table> parse(const std::string &text) {
    return std::make_shared<const lookup_table>(lookup_table::from_json(text));
  }

  temp_dir cache;
  log_capture log;
  std::shared_ptr<tunekit::simulated_measurer> meas =
      std::make_shared<tunekit::simulated_measurer>(mm_cost);
};

TEST(table_format, inductor_keys_are_inductors_text) {
  EXPECT_EQ(tunekit::table_key("NVIDIA H200", key{std::string(mm_input)}, "", "mm",
                               table_key_format::inductor),
            std::string("NVIDIA H200+") + mm_input + "+mm");
  EXPECT_EQ(tunekit::table_key("", key{std::string(seed_input)},
                               tunekit::table_params(config{{"beta", 1}, {"alpha", 1}},
                                                     table_key_format::inductor),
                               "addmm", table_key_format::inductor),
            std::string(seed_input) + "+alpha=1&beta=1+addmm");
  // tunekit's own format quotes the string: the text the tuner looked up before.
  EXPECT_EQ(tunekit::table_input_key(key{std::string(mm_input)}),
            "(\"" + std::string(mm_input) + "\")");
  // Keys that are not one string keep tunekit's text in either format.
  EXPECT_EQ(tunekit::table_input_key(key{512, "float16"}, table_key_format::inductor),
            "(512, \"float16\")");
  EXPECT_EQ(tunekit::table_input_key(key{512}, table_key_format::inductor), "(512)");

  // Param values as Python's str() writes them.
  EXPECT_EQ(tunekit::table_params(config{{"flag", true},
                                         {"off", false},
                                         {"mode", "fast"},
                                         {"one", 1.0},
                                         {"tenth", 0.1},
                                         {"big", 1e16},
                                         {"wide", 1e15},
                                         {"small", 1e-5},
                                         {"edge", 0.0001},
                                         {"neg", -2.5},
                                         {"n", -3}},
                                  table_key_format::inductor),
            "big=1e+16&edge=0.0001&flag=True&mode=fast&n=-3&neg=-2.5&off=False&one=1.0&"
            "small=1e-05&tenth=0.1&wide=1000000000000000.0");
  EXPECT_EQ(tunekit::table_params(config{{"x", 1.5e300}, {"z", 0.0}, {"y", 123456.789}},
                                  table_key_format::inductor),
            "x=1.5e+300&y=123456.789&z=0.0");

  EXPECT_EQ(tunekit::parse_table_key_format("inductor"), table_key_format::inductor);
  EXPECT_EQ(tunekit::parse_table_key_format("tunekit"), table_key_format::tunekit);
  EXPECT_EQ(tunekit::parse_table_key_format("Inductor"), std::nullopt);
  EXPECT_EQ(tunekit::to_string(table_key_format::inductor), "inductor");
}

TEST(table_format, the_seeds_example_table_is_read_and_its_null_is_no_value) {
  const auto t = lookup_table::from_json(seed_table);
  ASSERT_EQ(t.size(), 1U);
  const auto *row = t.find(std::string(seed_input) + "+alpha=1&beta=1+addmm");
  ASSERT_NE(row, nullptr) << t.to_json();
  ASSERT_EQ(row->size(), 2U);
  EXPECT_TRUE((*row)[0].choice.same_fields(triton_mm(32))) << (*row)[0].choice.to_string();
  EXPECT_FALSE((*row)[0].choice.contains("hint_override"));
  EXPECT_EQ((*row)[0].template_hash, seed_hash);
  EXPECT_EQ((*row)[1], (tunekit::table_entry{bias_addmm(), ""}));
  EXPECT_EQ(t.templates(), (std::vector<std::string>{"aten::bias_addmm", "triton::mm"}));
  // Written back, the null is left out; everything else stays.
  const auto again = lookup_table::from_json(t.to_json());
  EXPECT_EQ(again.entries(), t.entries());
  EXPECT_EQ(t.to_json().find("hint_override"), std::string::npos);

  // A null template_hash is no hash.
  const auto n = lookup_table::from_json(R"({"(1)+mm": [{"template_id": "t", "template_hash": null,
                                                         "BLOCK": 1, "extra": null}]})");
  EXPECT_EQ(n.find("(1)+mm")->at(0), (tunekit::table_entry{tiled(1).set_template_id("t"), ""}));
}

TEST(table_format, a_config_field_named_template_id_or_template_hash_is_refused) {
  for (const char *reserved : {"template_id", "template_hash"}) {
    SCOPED_TRACE(reserved);
    lookup_table t;
    try {
      t.add("(1)+mm", {config{{reserved, "x"}, {"BLOCK", 1}}, ""});
      FAIL() << "expected an error";
    } catch (const tunekit::error &e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("(1)+mm"), std::string::npos) << what;
      EXPECT_NE(what.find(std::string("field named '") + reserved + "'"), std::string::npos)
          << what;
      EXPECT_NE(what.find("set_template_id"), std::string::npos) << what;
    }
    EXPECT_TRUE(t.empty());
  }

  // The same from the winner cache: the export says why instead of writing a table whose entry
  // would read back as another template.
  tunekit::cache_entry e;
  e.function = {"gemm", "v1"};
  e.key = key{8};
  e.hardware = tunekit_test::test_hardware();
  e.candidates = {
      {config{{"template_id", "tiled"}, {"BLOCK", 1}}, tunekit::candidate_status::ok, 1.0, {}, ""}};
  EXPECT_THROW(static_cast<void>(lookup_table::from_entries({e}, "", 1)), tunekit::error);
}

TEST_F(inductor_table_test, a_table_in_inductors_exact_form_is_served) {
  // What Inductor reads for this mm (its key, its members, its null), device-specific.
  const std::string text = std::string(R"({"Test CPU 9000+)") + mm_input + R"(+mm": [
    {"template_id": "triton::mm", "EVEN_K": true, "USE_FAST_ACCUM": false, "ACC_TYPE": "tl.float32",
     "num_stages": 2, "num_warps": 4, "BLOCK_M": 128, "BLOCK_N": 32, "BLOCK_K": 64,
     "hint_override": null, "GROUP_M": 8}]})";
  auto f = make(opts(parse(text)));
  EXPECT_EQ(f(std::string(mm_input)), 128);
  EXPECT_EQ(f.tuner().last_source(), source::table);
  EXPECT_EQ(meas->candidates_measured(), 0U);

  // tunekit's own format looks up the quoted key: no hit, a search.
  temp_dir other;
  auto o = opts(parse(text), table_key_format::tunekit);
  o.process->env.cache_dir = other.path();
  auto g = make(o);
  EXPECT_EQ(g(std::string(mm_input)), 64);
  EXPECT_EQ(g.tuner().last_source(), source::search);
}

TEST_F(inductor_table_test, the_seeds_table_is_served_with_its_params_and_hash) {
  // Two choices of two templates: a search among them only.
  auto o = opts(parse(seed_table), table_key_format::inductor, "addmm");
  o.table.template_hashes = {{"triton::mm", seed_hash}};
  auto f = make(o);
  EXPECT_EQ(f(std::string(seed_input)), 32);
  EXPECT_EQ(f.tuner().last_source(), source::table_search);
  EXPECT_EQ(meas->candidates_measured(), 2U);

  // The template changed since: its choice is stale, the other one is served.
  temp_dir other;
  auto stale = opts(parse(seed_table), table_key_format::inductor, "addmm");
  stale.process->env.cache_dir = other.path();
  stale.table.template_hashes = {{"triton::mm", "another"}};
  auto g = make(stale);
  EXPECT_EQ(g(std::string(seed_input)), 0);
  EXPECT_EQ(g.tuner().last_source(), source::table);
  EXPECT_EQ(log.count(tunekit::log_level::warning, {"stale", seed_hash}), 1U) << log.dump();
}

TEST_F(inductor_table_test, an_export_in_the_inductor_format_has_inductors_keys_and_reads_back) {
  {
    auto f = make(opts(nullptr, table_key_format::inductor, "addmm"));
    EXPECT_EQ(f(std::string(seed_input)), 64);
    EXPECT_EQ(f.tuner().last_source(), source::search);
  }
  const auto entries = entries_in(cache.path());
  ASSERT_EQ(entries.size(), 1U);
  const auto t =
      lookup_table::from_entries(entries, "addmm", 2, config{{"alpha", 1}, {"beta", 1}},
                                 {{"triton::mm", seed_hash}}, table_key_format::inductor);
  const std::string k = std::string("Test CPU 9000+") + seed_input + "+alpha=1&beta=1+addmm";
  ASSERT_NE(t.find(k), nullptr) << t.to_json();
  EXPECT_EQ(*t.find(k),
            (entry_list{entry(triton_mm(64), seed_hash), entry(triton_mm(32), seed_hash)}));
  const std::string text = t.to_json();
  EXPECT_NE(text.find("\"" + k + "\""), std::string::npos) << text;
  EXPECT_NE(text.find(R"("template_id": "triton::mm")"), std::string::npos) << text;

  // Read back by a fresh tuner (no cache): its first choice needs no measurement.
  temp_dir fresh;
  auto o =
      opts(parse(lookup_table::from_entries(entries, "addmm", 1, config{{"alpha", 1}, {"beta", 1}},
                                            {{"triton::mm", seed_hash}}, table_key_format::inductor)
                     .to_json()),
           table_key_format::inductor, "addmm");
  o.process->env.cache_dir = fresh.path();
  o.table.template_hashes = {{"triton::mm", seed_hash}};
  const auto measured = meas->candidates_measured();
  auto g = make(o);
  EXPECT_EQ(g(std::string(seed_input)), 64);
  EXPECT_EQ(g.tuner().last_source(), source::table);
  EXPECT_EQ(meas->candidates_measured(), measured);
}

} // namespace
