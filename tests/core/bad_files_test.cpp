// Files nobody meant tunekit to read (docs/reliability.md, "Bad files"): nesting deep enough to
// overflow a recursive parser, objects large enough to make a quadratic one stall, special files
// (FIFOs, devices) that a blocking read would wait on or read forever, files over the size limit.

#include "json_io.hpp"
#include "os.hpp"
#include "test_support.hpp"

#include <tunekit/artifact.hpp>
#include <tunekit/lookup_table.hpp>
#include <tunekit/tunekit.hpp>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <string>

#include <sys/stat.h>

namespace {

using tunekit_test::error_of;
using tunekit_test::temp_dir;

std::string nested(std::size_t levels) {
  return std::string(levels, '[') + std::string(levels, ']');
}

bool has(const std::string &text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

} // namespace

TEST(bad_files, nesting_up_to_the_limit_is_read_and_deeper_is_refused) {
  using tunekit::detail::max_json_depth;
  EXPECT_EQ(max_json_depth, 512U);
  const auto j = tunekit::detail::parse_json(nested(max_json_depth));
  EXPECT_TRUE(j.is_array());
  for (const std::size_t levels : {max_json_depth + 1, std::size_t{100000}}) {
    const std::string why = error_of([&] { (void)tunekit::detail::parse_json(nested(levels)); });
    EXPECT_TRUE(has(why, "more than 512 levels deep")) << levels << ": " << why;
  }
  // Objects count as levels too, and the refusal is prefixed with what was read.
  std::string objects;
  for (int i = 0; i < 600; ++i) {
    objects += "{\"a\":";
  }
  objects += "1" + std::string(600, '}');
  EXPECT_TRUE(has(error_of([&] { (void)tunekit::detail::parse(objects, "the file"); }),
                  "the file is not valid JSON: it nests arrays and objects more than 512"));
}

TEST(bad_files, a_large_object_is_read_whole_in_order_and_a_member_named_twice_is_refused) {
  std::string text = "{";
  constexpr int members = 200000;
  for (int i = members - 1; i >= 0; --i) {
    text += "\"m" + std::to_string(i) + "\": " + std::to_string(i) + (i > 0 ? "," : "");
  }
  const auto j = tunekit::detail::parse_json(text + "}");
  ASSERT_EQ(j.size(), static_cast<std::size_t>(members));
  EXPECT_EQ(j.begin().key(), "m199999"); // the file's order, not sorted
  EXPECT_EQ(j["m7"].get<int>(), 7);
  // Twice in a large object (past the members searched one by one) and in a small one.
  EXPECT_TRUE(has(error_of([&] { (void)tunekit::detail::parse_json(text + ", \"m123\": 0}"); }),
                  "the member \"m123\" appears twice in one object"));
  EXPECT_TRUE(has(error_of([] { (void)tunekit::detail::parse_json(R"({"a": 1, "a": 2})"); }),
                  "the member \"a\" appears twice"));
  // The same name in sibling or nested objects is no repeat.
  const auto ok = tunekit::detail::parse_json(R"({"a": {"a": 1}, "b": [{"a": 1}, {"a": 2}]})");
  EXPECT_EQ(ok["b"][1]["a"].get<int>(), 2);
}

TEST(bad_files, special_files_are_refused_without_blocking_or_reading_them) {
  std::string why;
  EXPECT_FALSE(tunekit::detail::read_file("/dev/zero", &why));
  EXPECT_EQ(why, "is a character device, not a regular file; it is not read");
  temp_dir dir;
  const auto fifo = dir.path() / "entry.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0) << std::strerror(errno);
  EXPECT_FALSE(tunekit::detail::read_file(fifo, &why)); // no writer: a blocking open would wait
  EXPECT_EQ(why, "is a FIFO, not a regular file; it is not read");
  EXPECT_FALSE(tunekit::detail::read_file(dir.path(), &why));
  EXPECT_EQ(why, "is a directory, not a regular file; it is not read");
  EXPECT_FALSE(tunekit::detail::read_file(dir.path() / "absent.json", &why));
  EXPECT_EQ(why, "cannot be opened: No such file or directory");
  // The readers say so, naming the file.
  EXPECT_EQ(error_of([] { (void)tunekit::lookup_table::load("/dev/zero"); }),
            "lookup table /dev/zero is a character device, not a regular file; it is not read");
  EXPECT_TRUE(has(error_of([&] { (void)tunekit::lookup_table::load(fifo); }), "is a FIFO"));
  // /proc files say their size is 0 and are read to their end.
  const auto cpuinfo = tunekit::detail::read_file("/proc/self/status", &why);
  ASSERT_TRUE(cpuinfo) << why;
  EXPECT_TRUE(has(*cpuinfo, "Name:"));
}

TEST(bad_files, an_artifact_that_is_a_fifo_is_refused_saying_so) {
  temp_dir dir;
  tunekit::artifact a;
  a.name = "k";
  a.key = tunekit::key{1};
  a.device = tunekit::device_identity::of(tunekit_test::test_hardware());
  a.config = tunekit::config{{"BLOCK", 256}};
  const auto path = tunekit::artifact_path(dir.path(), a.name, a.key, a.device);
  std::filesystem::create_directories(path.parent_path());
  ASSERT_EQ(::mkfifo(path.c_str(), 0644), 0) << std::strerror(errno);
  const auto r = tunekit::load_artifact(dir.path(), a.name, a.key, a.device);
  EXPECT_TRUE(r.rejected());
  EXPECT_EQ(r.detail, "is a FIFO, not a regular file; it is not read");
  EXPECT_EQ(tunekit::artifact_file_problem(path), r.detail);
}

TEST(bad_files, a_table_is_read_key_by_key_with_its_errors_as_a_whole_read_gives_them) {
  using tunekit::lookup_table;
  std::string text = "{";
  for (int i = 0; i < 1000; ++i) {
    text += (i > 0 ? ",\n" : "") + std::string("\"k") + std::to_string(i) +
            R"(": [{"template_id": "t", "BLOCK": )" + std::to_string(i) + "}]";
  }
  const lookup_table t = lookup_table::from_json(text + "}");
  ASSERT_EQ(t.size(), 1000U);
  ASSERT_NE(t.find("k999"), nullptr);
  EXPECT_EQ(t.find("k999")->front().choice.get_int("BLOCK"), 999);
  // A key named twice, an entry that is wrong after good ones, a syntax error at the end, a top
  // level that is not an object.
  EXPECT_EQ(
      error_of([&] { (void)lookup_table::from_json(text + R"(, "k7": [{"template_id": "t"}]})"); }),
      "lookup table is not valid JSON: the member \"k7\" appears twice in one object");
  EXPECT_EQ(error_of([&] { (void)lookup_table::from_json(text + R"(, "z": [7]})"); }),
            "lookup table key 'z', entry 0: an entry must be an object");
  EXPECT_TRUE(has(error_of([&] { (void)lookup_table::from_json(text + ", "); }),
                  "lookup table is not valid JSON: "));
  EXPECT_EQ(error_of([] { (void)lookup_table::from_json("[1, 2]"); }),
            "lookup table is not a JSON object of key -> list of entries");
}

TEST(bad_files, deep_nesting_in_a_table_or_an_artifact_is_an_error_naming_it) {
  const std::string table = R"({"k": [{"template_id": "t", "BLOCK": )" + nested(100000) + "}]}";
  EXPECT_TRUE(has(error_of([&] { (void)tunekit::lookup_table::from_json(table); }),
                  "lookup table is not valid JSON: it nests arrays and objects more than 512"));
  const std::string art = R"({"schema": "tunekit.artifact/1", "config": )" + nested(100000) + "}";
  EXPECT_TRUE(has(error_of([&] { (void)tunekit::artifact_from_json(art); }), "levels deep"));
}

TEST(bad_files, the_size_limit_is_a_setting_with_units) {
  using tunekit::detail::parse_file_size;
  EXPECT_EQ(parse_file_size("0"), 0U);
  EXPECT_EQ(parse_file_size("4096"), 4096U);
  EXPECT_EQ(parse_file_size("1K"), 1024U);
  EXPECT_EQ(parse_file_size("256M"), 256U << 20);
  EXPECT_EQ(parse_file_size("2GiB"), std::uint64_t{2} << 30);
  EXPECT_EQ(parse_file_size("1tb"), std::uint64_t{1} << 40);
  for (const char *bad :
       {"", "M", "-1", "1.5G", "12 M", "1X", "1MM", "99999999999999999999", "20000000T"}) {
    EXPECT_FALSE(parse_file_size(bad)) << bad;
  }
  temp_dir dir;
  const auto path = dir.path() / "t.json";
  tunekit_test::write_text(path, std::string(2000, ' ') + "{}");
  std::string why;
  {
    const tunekit_test::scoped_env env({"TUNEKIT_MAX_FILE_SIZE"});
    EXPECT_EQ(tunekit::detail::max_file_size(), tunekit::detail::default_max_file_size);
    EXPECT_TRUE(tunekit::detail::read_file(path, &why));
  }
  const tunekit_test::scoped_env env({}, {{"TUNEKIT_MAX_FILE_SIZE", "1K"}});
  EXPECT_FALSE(tunekit::detail::read_file(path, &why));
  EXPECT_EQ(why, "is 2002 bytes, larger than the limit of 1024 bytes (TUNEKIT_MAX_FILE_SIZE); it "
                 "is not read");
  EXPECT_TRUE(has(error_of([&] { (void)tunekit::lookup_table::load(path); }),
                  "larger than the limit of 1024 bytes"));
  // An explicit limit is used as it is.
  EXPECT_TRUE(tunekit::detail::read_file(path, &why, 0));
}
