// libFuzzer target for tunekit's file readers. Built once per reader (TUNEKIT_FUZZ_READER): each
// input is handed to the reader as a file's text. A reader may refuse it only with a
// `tunekit::error`; any other exception (a library's own escaping) or a crash is a finding.

#include <tunekit/artifact.hpp>
#include <tunekit/error.hpp>
#include <tunekit/formats/kernel_launcher.hpp>
#include <tunekit/formats/kernel_tuner.hpp>
#include <tunekit/lookup_table.hpp>
#include <tunekit/strategy/replay.hpp>
#include <tunekit/winner_cache.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <string>
#include <string_view>

namespace {

void read(std::string_view text) {
#if TUNEKIT_FUZZ_READER == 1
  static_cast<void>(tunekit::cache_entry_from_json(text));
#elif TUNEKIT_FUZZ_READER == 2
  static_cast<void>(tunekit::artifact_from_json(text));
#elif TUNEKIT_FUZZ_READER == 3
  static_cast<void>(tunekit::lookup_table::from_json(text));
#elif TUNEKIT_FUZZ_READER == 4
  static_cast<void>(tunekit::parse_replay_table(text, "fuzz input"));
#elif TUNEKIT_FUZZ_READER == 5
  // An imported file exports, and the export imports back with the same candidates: a refusal
  // after the first import succeeded is a finding, not a clear refusal.
  // The key from problem_size, else (a refusal) a given one.
  const tunekit::function_identity fn{"f", "v"};
  tunekit::cache_entry entry;
  try {
    entry = tunekit::from_kernel_tuner_cache(text, "fuzz input", {fn, std::nullopt});
  } catch (const tunekit::error &) {
    entry = tunekit::from_kernel_tuner_cache(text, "fuzz input", {fn, tunekit::key{1}});
  }
  try {
    const auto back = tunekit::from_kernel_tuner_cache(tunekit::to_kernel_tuner_cache(entry),
                                                       "fuzz export", {fn, entry.key});
    if (back.candidates.size() != entry.candidates.size() || !(back.winner == entry.winner)) {
      std::fprintf(stderr, "the export of an imported file imports as another entry\n");
      std::abort();
    }
  } catch (const tunekit::error &e) {
    std::fprintf(stderr, "an imported file does not round-trip: %s\n", e.what());
    std::abort();
  }
#elif TUNEKIT_FUZZ_READER == 6
  // An imported wisdom file exports, and the export imports back as the same entries (the same
  // devices, keys, winners and numbers of candidates): a refusal after the first import succeeded
  // is a finding, not a clear refusal.
  const tunekit::function_identity fn{"f", "v"};
  const auto wisdom = tunekit::from_kernel_launcher_wisdom(text, "fuzz input", {fn});
  std::map<std::string, const tunekit::cache_entry *> first;
  for (const auto &e : wisdom.entries) {
    first[e.hardware.name + '\n' + e.key.to_string()] = &e;
  }
  try {
    const auto back = tunekit::from_kernel_launcher_wisdom(
        tunekit::to_kernel_launcher_wisdom(wisdom.entries, {wisdom.tuning_key, {}}), "fuzz export",
        {fn});
    bool same = back.entries.size() == first.size();
    for (const auto &e : back.entries) {
      const auto it = first.find(e.hardware.name + '\n' + e.key.to_string());
      same = same && it != first.end() && it->second->hardware == e.hardware &&
             it->second->candidates.size() == e.candidates.size() &&
             it->second->winner == e.winner &&
             it->second->candidates[it->second->winner_index].time_ms ==
                 e.candidates[e.winner_index].time_ms;
    }
    if (!same) {
      std::fprintf(stderr, "the export of an imported wisdom file imports as other entries\n");
      std::abort();
    }
  } catch (const tunekit::error &e) {
    std::fprintf(stderr, "an imported wisdom file does not round-trip: %s\n", e.what());
    std::abort();
  }
#else
#error "TUNEKIT_FUZZ_READER names no reader"
#endif
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
  try {
    read(std::string_view(reinterpret_cast<const char *>(data), size));
  } catch (const tunekit::error &) {
    // A clear refusal: what a reader must do with bad input.
  } catch (const std::exception &e) {
    std::fprintf(stderr, "a reader let a non-tunekit exception escape: %s\n", e.what());
    std::abort();
  }
  return 0;
}
