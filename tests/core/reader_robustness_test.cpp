// Every file reader against damaged input: each truncation of a valid file and thousands of seeded
// byte mutations must either parse or raise `tunekit::error` — never another exception, never a
// crash (the sanitizer build turns memory errors into failures). A deterministic, CI-sized cousin
// of a fuzz target.

#include "test_support.hpp"

#include <tunekit/artifact.hpp>
#include <tunekit/lookup_table.hpp>
#include <tunekit/tunekit.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <string_view>

namespace {

using reader = std::function<void(std::string_view)>;

struct outcome {
  int parsed = 0;
  int refused = 0;
};

// Feeds `text` to `read`; a tunekit::error is a refusal, anything else fails the test.
void feed(const reader &read, std::string_view text, outcome &o) {
  try {
    read(text);
    ++o.parsed;
  } catch (const tunekit::error &) {
    ++o.refused;
  } catch (const std::exception &e) {
    ADD_FAILURE() << "non-tunekit exception " << typeid(e).name() << ": " << e.what()
                  << "\ninput:\n"
                  << text;
  }
}

outcome damage(const std::string &valid, const reader &read) {
  outcome o;
  feed(read, valid, o);
  EXPECT_EQ(o.parsed, 1) << "the valid input must parse";
  for (std::size_t n = 0; n < valid.size(); ++n) {
    feed(read, std::string_view(valid).substr(0, n), o);
  }
  // Seeded mutations: replace, insert or delete one byte, with characters JSON cares about.
  static constexpr std::string_view alphabet = "{}[]\":,0123456789.-+eEtrufalsn \\\x01\xff";
  std::uint64_t state = 12345;
  auto next = [&state] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return state >> 33;
  };
  for (int i = 0; i < 3000; ++i) {
    std::string text = valid;
    const std::size_t at = next() % text.size();
    const char c = alphabet[next() % alphabet.size()];
    switch (next() % 3) {
    case 0:
      text[at] = c;
      break;
    case 1:
      text.insert(at, 1, c);
      break;
    default:
      text.erase(at, 1);
      break;
    }
    feed(read, text, o);
  }
  EXPECT_GT(o.refused, 0);
  return o;
}

TEST(reader_robustness, winner_cache_entry) {
  tunekit::cache_entry e;
  e.function = {"scale", "v1"};
  e.key = tunekit::key{1024, 2.5, true, "float32"};
  e.hardware = tunekit_test::test_hardware();
  e.dependencies = tunekit::core_dependencies();
  tunekit::candidate_record ok;
  ok.config = tunekit::config{{"BLOCK", 256}, {"algo", "tiled"}};
  ok.time_ms = 1.5;
  ok.stats = tunekit::summarize({1.5, 1.5});
  tunekit::candidate_record failed;
  failed.config = tunekit::config{{"BLOCK", 512}, {"algo", "tiled"}};
  failed.status = tunekit::candidate_status::failed;
  failed.reason = "too many resources";
  e.candidates = {ok, failed};
  e.winner = ok.config;
  e.timestamp = "2026-11-29T00:00:00Z";
  e.measurer = "simulated";
  const auto o = damage(tunekit::to_json(e),
                        [](std::string_view t) { (void)tunekit::cache_entry_from_json(t); });
  EXPECT_GT(o.refused, 3000);
}

TEST(reader_robustness, artifact) {
  tunekit::artifact a;
  a.name = "scale";
  a.key = tunekit::key{4096, "float16"};
  a.key_names = {"N", "dtype"};
  a.device = tunekit::device_identity{"NVIDIA H200", "sm_90", 132};
  a.config = tunekit::config{{"BLOCK", 1024}, {"num_warps", 8}, {"alpha", 0.5}};
  damage(tunekit::to_json(a), [](std::string_view t) { (void)tunekit::artifact_from_json(t); });
}

TEST(reader_robustness, lookup_table) {
  const std::string table = R"({
  "NVIDIA H200+(4096, 4096)+mm": [
    {"template_id": "triton_mm", "BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 4,
     "template_hash": "abc"},
    {"template_id": "aten_mm"}
  ],
  "(1024, 1024)+alpha=0.5+mm": [{"template_id": "triton_mm", "BLOCK_M": 64, "fast": true}]
})";
  damage(table, [](std::string_view t) { (void)tunekit::lookup_table::from_json(t); });
}

} // namespace
