// The C++ of docs/search.md, compiled as shown. Each block of the page stands below verbatim,
// between `// page:` and `// page end`, inside a function that declares what the page leaves to
// the reader. scripts/check-doc-snippets.py fails when the page and this file drift apart. The
// page's layout is kept, so clang-format is off.
// clang-format off
#include <tunekit/strategy/run_search.hpp>
#include <tunekit/tunekit.hpp>

#include <chrono>
#include <span>
#include <vector>

namespace search_page {

tunekit::key key_fn(const float *, int n) { return tunekit::key{n}; }
bool prune_fn(const tunekit::config &, const float *, int) { return true; }
void xgemm(const float *, int, const tunekit::config &) {}
std::vector<double> measure_all(std::span<const std::size_t> batch) {
  return std::vector<double>(batch.size(), 1.0);
}

void in_the_tuner(const tunekit::config_space &space, const std::vector<tunekit::config> &reviewed) {
// page: docs/search.md block 1
tunekit::tuner_options options;
options.search.budget = {.max_evaluations = 400, .max_time = std::chrono::minutes(10), .patience = 150};
options.search.strategy = "hybrid";          // the default; "tpe", "genetic", "local", "random"
options.search.seed = 7;                     // the same on every rank
options.search.batch_size = 16;              // candidates measured (and compiled) between decisions
options.search.lookahead = 32;               // proposals made ahead: the next two batches compile while this one is measured
options.search.transfer_from_cache = true;   // start from the winners of other devices and keys
options.search.start_configs = reviewed;     // and from these (e.g. artifacts, lookup tables)
auto tuned = tunekit::autotune("xgemm", space, key_fn, prune_fn, xgemm, options);
// page end
  static_cast<void>(tuned);
}

void rerank() {
// page: docs/search.md block 2
tunekit::tuner_options options;
options.search.rerank = {.band = 0.03, .max_leaders = 4, .rounds = 3, .runs = 0}; // the defaults
options.search.rerank.band = 0;                                                 // off
// page end
  static_cast<void>(options);
}

tunekit::search_space search_spaces() {
// page: docs/search.md block 3
auto space = tunekit::search_space::product(
    {{"MWG", {16, 32, 64, 128}}, {"MDIMC", {8, 16, 32}}, {"VWM", {1, 2, 4, 8}}},
    {[](const tunekit::config& c) { return c.get_int("MWG") % (c.get_int("MDIMC") * c.get_int("VWM")) == 0; }});
tunekit::search_rng rng(42);
auto some = space.sample(rng, 10);                                   // distinct valid indices
auto near = space.neighbours(some[0], tunekit::neighbourhood::adjacent);
tunekit::config c = space.to_config(some[0]);
// page end
  static_cast<void>(near);
  static_cast<void>(c);
  return space;
}

void driver(const tunekit::search_space &space, const std::vector<tunekit::config> &winners,
            tunekit::communicator &comm) {
// page: docs/search.md block 4
auto strat = tunekit::make_strategy("hybrid");
tunekit::search_options opts{.seed = 7, .batch_size = 4, .start_points = tunekit::transfer_indices(space, winners)};
auto result = tunekit::run_search(space, *strat, {.max_evaluations = 200, .max_time = std::chrono::minutes(5), .patience = 80},
    [&](std::span<const std::size_t> batch) {
      std::vector<double> times = measure_all(batch);   // +infinity for a failure
      comm.all_reduce_max(times);                        // with several ranks
      return times;
    }, opts);
// result.best_index, result.best_time_ms, result.evaluations, result.trace, result.history, result.stop
// page end
  static_cast<void>(result);
}

} // namespace search_page
