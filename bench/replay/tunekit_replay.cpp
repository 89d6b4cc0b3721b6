// tunekit_replay: runs search strategies over measured spaces (Kernel Tuner cache files) for many
// seeds and reports the mean fraction of optimum (best time in the file / best time found) at
// several budgets, and the time-based score of Willemsen et al. (FGCS 2024; `tunekit::time_score`).
// An evaluation is a distinct config measured for the first time, repeats are free, and the space
// is the set of configs in the file: Kernel Tuner's counting. Configs that failed (an error
// recorded in the file) are counted both ways: charged (each failure uses one evaluation of the
// budget and, on the score's time axis, what the file records it cost) and free (a failure is told
// to the strategy and costs nothing).
//
//   tunekit_replay [--strategy hybrid,tpe,...] [--seeds 20] [--first-seed 0]
//                  [--budgets 25,100,400] [--batch 1] [--lookahead 0] [--transfer [K]]
//                  [--failed-from-kernel] [--no-failure-model] [--no-score] [--json out.json]
//                  FILE...
//
// Seeds first-seed .. first-seed + seeds - 1 are run for every strategy and file.
//
// The score's axis is the tuning time the file records per entry (compile, verification,
// benchmark and framework time) when every entry records one, else evaluations.
//
// With --failed-from-kernel, the configs that another file of the same kernel holds and this one
// lacks are added to this one as failures: they passed the space's restrictions (the other GPU
// measured them), so a real run would have compiled and launched them here. --no-failure-model
// runs "hybrid" without its failure model (`hybrid_settings::avoid_failures`), to measure it.
// --no-score stops each search at the largest budget instead of past the score's range (often
// hundreds to thousands of evaluations), and reports no score: fractions of optimum alone, sooner.
//
// With --transfer, each file starts from the K fastest configs (default 5) of every other file of
// the same kernel (leave one GPU out) that are not one parameter from a faster one taken
// (`tunekit::distinct_best`, as the tuner's transfer picks them); files of a kernel are those with
// the same kernel_name. A source knows the whole other file (every config, its time), which a
// cache entry of a budgeted search does not: --source-budget N makes each other file a source as
// a search of N evaluations there leaves it (the default strategy, seeds 1000-1009; run seed s
// takes search s % 10): its points the distinct best of what that search measured, its times only
// those configs.

#include "strategy/strategies.hpp"

#include <tunekit/error.hpp>
#include <tunekit/strategy/replay.hpp>
#include <tunekit/strategy/run_search.hpp>
#include <tunekit/strategy/search_space.hpp>
#include <tunekit/strategy/strategy.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace {

struct options {
  std::vector<std::string> strategies = tunekit::strategy_names();
  std::size_t seeds = 20;
  std::size_t first_seed = 0;
  std::vector<std::size_t> budgets = {25, 100, 400};
  std::size_t batch = 1;
  std::size_t lookahead = 0; // proposals ahead of the batch measured (search_options::lookahead)
  std::size_t transfer = 0;  // top-k per other file; 0: no transfer
  // How the transferred configs are taken: "agree" (each file a source whose further points wait
  // for its agreement, with its times), "no-times" (the same without its times: only the
  // agreement of its best point), "all" (every one measured first, as plain start points).
  std::string transfer_mode = "agree";
  double agreement = 0.5;
  std::size_t source_budget = 0; // evaluations of the search a source comes from; 0: whole file
  bool failed_from_kernel = false;
  bool no_failure_model = false; // hybrid with avoid_failures off, to measure what it does
  bool no_score = false;         // stop at the largest budget; no time-based score
  std::string json_path;
  std::vector<std::string> files;
};

std::vector<std::string> split(const std::string &s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string part;
  while (std::getline(ss, part, ',')) {
    if (!part.empty()) {
      out.push_back(part);
    }
  }
  return out;
}

std::size_t to_count(const std::string &s, const std::string &what) {
  try {
    std::size_t used = 0;
    const unsigned long long v = std::stoull(s, &used);
    if (used == s.size() && v > 0) {
      return static_cast<std::size_t>(v);
    }
  } catch (const std::exception &) {
  }
  throw tunekit::error(what + " must be a positive integer, not '" + s + "'");
}

options parse(int argc, char **argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        throw tunekit::error(a + " needs a value");
      }
      return argv[++i];
    };
    if (a == "--strategy") {
      o.strategies = split(next());
    } else if (a == "--seeds") {
      o.seeds = to_count(next(), "--seeds");
    } else if (a == "--first-seed") {
      const std::string v = next();
      o.first_seed = v == "0" ? 0 : to_count(v, "--first-seed");
    } else if (a == "--budgets") {
      o.budgets.clear();
      for (const auto &b : split(next())) {
        o.budgets.push_back(to_count(b, "--budgets"));
      }
    } else if (a == "--batch") {
      o.batch = to_count(next(), "--batch");
    } else if (a == "--lookahead") {
      const std::string v = next();
      o.lookahead = v == "0" ? 0 : to_count(v, "--lookahead");
    } else if (a == "--transfer") {
      o.transfer = 5;
      if (i + 1 < argc && std::isdigit(static_cast<unsigned char>(argv[i + 1][0])) != 0) {
        o.transfer = to_count(next(), "--transfer");
      }
    } else if (a == "--transfer-mode") {
      o.transfer_mode = next();
      if (o.transfer_mode != "agree" && o.transfer_mode != "no-times" && o.transfer_mode != "all") {
        throw tunekit::error("--transfer-mode takes agree, no-times or all, not '" +
                             o.transfer_mode + "'");
      }
    } else if (a == "--source-budget") {
      o.source_budget = to_count(next(), "--source-budget");
    } else if (a == "--agreement") {
      o.agreement = std::stod(next());
    } else if (a == "--no-score") {
      o.no_score = true;
    } else if (a == "--failed-from-kernel") {
      o.failed_from_kernel = true;
    } else if (a == "--no-failure-model") {
      o.no_failure_model = true;
    } else if (a == "--json") {
      o.json_path = next();
    } else if (a == "-h" || a == "--help") {
      std::cout
          << "usage: tunekit_replay [--strategy a,b] [--seeds N] [--first-seed S] "
             "[--budgets 25,100,400] "
             "[--batch B] [--lookahead W] [--transfer [K]] [--transfer-mode agree|no-times|all] "
             "[--agreement R] [--source-budget N] [--failed-from-kernel] "
             "[--no-failure-model] [--json FILE] "
             "FILE...\n";
      std::exit(0);
    } else if (!a.empty() && a[0] == '-') {
      throw tunekit::error("unknown option " + a);
    } else {
      o.files.push_back(a);
    }
  }
  if (o.files.empty()) {
    throw tunekit::error("no replay file given");
  }
  std::sort(o.budgets.begin(), o.budgets.end());
  return o;
}

std::string short_name(const std::string &path) {
  std::string name = std::filesystem::path(path).filename().string();
  for (const char *ext : {".gz", ".json"}) {
    const std::string e = ext;
    if (name.size() > e.size() && name.compare(name.size() - e.size(), e.size(), e) == 0) {
      name.resize(name.size() - e.size());
    }
  }
  return name;
}

// What one seed's search over one table found.
struct run_result {
  std::vector<tunekit::search_evaluation> history;
  double strategy_seconds = 0;
  std::size_t proposals = 0;
};

// Runs until `budget` evaluations have succeeded (so that both countings can be read at every
// budget) and the free counting's cost has passed the score's range; a space measured whole
// stops it earlier.
run_result run_one(const tunekit::replay_table &t, const std::string &name, bool no_failure_model,
                   tunekit::search_options so, std::size_t budget, double score_end) {
  std::size_t successes = 0;
  double cost = 0; // free counting: successes only
  const bool recorded = t.has_costs();
  const tunekit::batch_evaluator lookup = t.evaluator();
  tunekit::batch_evaluator evaluate = [&](std::span<const std::size_t> batch) {
    std::vector<double> times = lookup(batch);
    for (std::size_t k = 0; k < batch.size(); ++k) {
      if (std::isfinite(times[k])) {
        ++successes;
        cost += recorded ? t.cost_of(batch[k]) : 1.0;
      }
    }
    return times;
  };
  so.agree_stop = [&](bool) { return successes >= budget && cost >= score_end; };
  std::unique_ptr<tunekit::strategy> strat;
  if (name == "hybrid" && no_failure_model) {
    tunekit::detail::hybrid_settings settings;
    settings.avoid_failures = false;
    strat = tunekit::detail::make_hybrid_strategy(settings);
  } else {
    strat = tunekit::make_strategy(name);
  }
  // The evaluation cap only guards against a space that is mostly failures.
  const tunekit::search_budget limit{.max_evaluations = 20 * std::max<std::size_t>(budget, 100),
                                     .max_time = std::chrono::hours(24 * 365)};
  auto r = tunekit::run_search(t.space, *strat, limit, evaluate, so);
  return {std::move(r.history), r.strategy_seconds, r.proposals};
}

constexpr std::array countings = {tunekit::failure_counting::charged,
                                  tunekit::failure_counting::free};
const char *counting_name(tunekit::failure_counting c) {
  return c == tunekit::failure_counting::charged ? "charged" : "free";
}

} // namespace

int main(int argc, char **argv) try {
  const options o = parse(argc, argv);
  std::vector<tunekit::replay_table> tables;
  for (const auto &f : o.files) {
    tables.push_back(tunekit::load_replay_table(f));
  }
  if (o.failed_from_kernel) {
    std::vector<tunekit::replay_table> with;
    for (std::size_t f = 0; f < tables.size(); ++f) {
      std::vector<tunekit::config> others;
      for (std::size_t g = 0; g < tables.size(); ++g) {
        if (g != f && tables[g].kernel_name == tables[f].kernel_name) {
          const auto theirs = tables[g].configs();
          others.insert(others.end(), theirs.begin(), theirs.end());
        }
      }
      with.push_back(tunekit::with_failures(tables[f], others));
    }
    tables = std::move(with);
  }
  const std::size_t max_budget = o.budgets.back();
  // --source-budget: the searches the sources come from, run once per file and seed, on demand.
  constexpr std::size_t source_searches = 10;
  std::map<std::pair<std::size_t, std::size_t>, std::vector<tunekit::search_evaluation>> searched;
  auto source_search = [&](std::size_t g, std::size_t k) -> const auto & {
    auto it = searched.find({g, k});
    if (it == searched.end()) {
      auto strat = tunekit::make_strategy("hybrid");
      tunekit::search_options so;
      so.seed = 1000 + k;
      const tunekit::search_budget limit{.max_evaluations = o.source_budget};
      auto r = tunekit::run_search(tables[g].space, *strat, limit, tables[g].evaluator(), so);
      it = searched.emplace(std::make_pair(g, k), std::move(r.history)).first;
    }
    return it->second;
  };
  nlohmann::json out = nlohmann::json::object();
  out["seeds"] = o.seeds;
  out["first_seed"] = o.first_seed;
  out["budgets"] = o.budgets;
  out["batch"] = o.batch;
  out["lookahead"] = o.lookahead;
  out["transfer_top_k"] = o.transfer;
  out["transfer_mode"] = o.transfer_mode;
  out["agreement"] = o.agreement;
  out["source_budget"] = o.source_budget;
  out["failed_from_kernel"] = o.failed_from_kernel;
  out["results"] = nlohmann::json::array();

  std::printf("| strategy | file | failed |");
  for (const auto c : countings) {
    for (auto b : o.budgets) {
      std::printf(" %s %zu |", counting_name(c), b);
    }
    std::printf(" %s score |", counting_name(c));
  }
  std::printf(" us/proposal |\n|---|---|---|");
  for (std::size_t k = 0; k < countings.size() * (o.budgets.size() + 1) + 1; ++k) {
    std::printf("---|");
  }
  std::printf("\n");
  for (const auto &name : o.strategies) {
    std::vector<std::vector<double>> mean(countings.size(),
                                          std::vector<double>(o.budgets.size() + 1, 0.0));
    std::size_t mean_failed = 0;
    for (std::size_t f = 0; f < tables.size(); ++f) {
      const auto &t = tables[f];
      // The transfer of run seed `seed` (the same for every seed when sources know whole files).
      auto transfer_of = [&](std::size_t seed) {
        std::pair<std::vector<std::size_t>, std::vector<tunekit::transfer_source>> taken;
        auto &[starts, sources] = taken;
        if (o.transfer == 0) {
          return taken;
        }
        for (std::size_t g = 0; g < tables.size(); ++g) {
          if (g == f || tables[g].kernel_name != t.kernel_name) {
            continue;
          }
          // What the source measured (indices of its space, times), fastest first; ties by index,
          // as `replay_table::best_configs` orders them.
          std::vector<tunekit::search_evaluation> theirs;
          if (o.source_budget == 0) {
            for (std::size_t pos = 0; pos < tables[g].times.size(); ++pos) {
              theirs.push_back({tables[g].space.index_at(pos), tables[g].times[pos]});
            }
          } else {
            theirs = source_search(g, seed % source_searches);
          }
          std::sort(theirs.begin(), theirs.end(), [](const auto &a, const auto &b) {
            return a.time_ms < b.time_ms || (a.time_ms == b.time_ms && a.index < b.index);
          });
          std::vector<tunekit::config> fastest_first;
          for (const auto &e : theirs) {
            if (std::isfinite(e.time_ms)) {
              fastest_first.push_back(tables[g].space.to_config(e.index));
            }
          }
          auto points =
              tunekit::transfer_indices(t.space, tunekit::distinct_best(fastest_first, o.transfer));
          if (o.transfer_mode == "all") {
            starts.insert(starts.end(), points.begin(), points.end());
            continue;
          }
          tunekit::transfer_source src{.points = std::move(points), .measured = {}};
          if (o.transfer_mode == "agree") {
            for (const auto &e : theirs) {
              if (auto idx = t.space.index_of(tables[g].space.to_config(e.index))) {
                src.measured.push_back({*idx, e.time_ms});
              }
            }
          }
          sources.push_back(std::move(src));
        }
        return taken;
      };
      const auto whole_files = o.source_budget == 0 ? transfer_of(0) : decltype(transfer_of(0)){};
      const double score_end = o.no_score ? 0.0 : tunekit::score_range_end(t);
      std::vector<std::vector<tunekit::search_evaluation>> runs;
      double seconds = 0;
      std::size_t proposals = 0;
      std::size_t failed = 0; // failures measured within the charged budget, over all seeds
      for (std::size_t seed = 0; seed < o.seeds; ++seed) {
        tunekit::search_options so;
        so.seed = o.first_seed + seed;
        so.batch_size = o.batch;
        so.lookahead = o.lookahead;
        if (o.source_budget == 0) {
          so.start_points = whole_files.first;
          so.transfer = whole_files.second;
        } else {
          std::tie(so.start_points, so.transfer) = transfer_of(so.seed);
        }
        so.transfer_agreement = o.agreement;
        auto r = run_one(t, name, o.no_failure_model, so, max_budget, score_end);
        seconds += r.strategy_seconds;
        proposals += r.proposals;
        for (std::size_t e = 0; e < r.history.size() && e < max_budget; ++e) {
          failed += std::isfinite(r.history[e].time_ms) ? 0 : 1;
        }
        runs.push_back(std::move(r.history));
      }
      nlohmann::json row = {
          {"strategy", name}, {"file", short_name(t.source)}, {"file_failures", t.failures}};
      const double failed_per_run = static_cast<double>(failed) / static_cast<double>(o.seeds);
      row["failed_per_run"] = failed_per_run;
      mean_failed += failed;
      std::printf("| %s | %s | %.1f |", name.c_str(), short_name(t.source).c_str(), failed_per_run);
      for (std::size_t c = 0; c < countings.size(); ++c) {
        const std::string suffix = c == 0 ? "" : "_free";
        for (std::size_t b = 0; b < o.budgets.size(); ++b) {
          double frac = 0;
          double square = 0;
          for (const auto &h : runs) {
            const double x = t.best_time_ms / tunekit::best_within(h, o.budgets[b], countings[c]);
            frac += x;
            square += x * x;
          }
          const auto n = static_cast<double>(o.seeds);
          frac /= n;
          // The standard error of the mean over the seeds (0 with one seed).
          const double sem =
              n > 1 ? std::sqrt(std::max(0.0, (square - n * frac * frac) / (n - 1)) / n) : 0.0;
          mean[c][b] += frac / static_cast<double>(tables.size());
          row["fraction" + suffix][std::to_string(o.budgets[b])] = frac;
          row["fraction_sem" + suffix][std::to_string(o.budgets[b])] = sem;
          std::printf(" %.3f |", frac);
        }
        if (o.no_score) {
          std::printf(" - |");
          continue;
        }
        const double score = tunekit::time_score(t, runs, countings[c]);
        mean[c].back() += score / static_cast<double>(tables.size());
        row["score" + suffix] = score;
        std::printf(" %.3f |", score);
      }
      const double us = proposals ? 1e6 * seconds / static_cast<double>(proposals) : 0.0;
      row["us_per_proposal"] = us;
      row["score_axis"] = t.has_costs() ? "recorded ms" : "evaluations";
      std::printf(" %.1f |\n", us);
      out["results"].push_back(row);
    }
    std::printf("| %s | **mean** | %.1f |", name.c_str(),
                static_cast<double>(mean_failed) /
                    static_cast<double>(o.seeds * std::max<std::size_t>(1, tables.size())));
    for (std::size_t c = 0; c < countings.size(); ++c) {
      const std::string key = c == 0 ? "mean" : "mean_free";
      for (std::size_t b = 0; b < o.budgets.size(); ++b) {
        std::printf(" **%.3f** |", mean[c][b]);
        out[key][name][std::to_string(o.budgets[b])] = mean[c][b];
      }
      if (o.no_score) {
        std::printf(" - |");
        continue;
      }
      std::printf(" **%.3f** |", mean[c].back());
      out[key][name]["score"] = mean[c].back();
    }
    std::printf("  |\n");
    std::fflush(stdout);
  }
  if (!o.json_path.empty()) {
    std::ofstream(o.json_path) << out.dump(2) << "\n";
  }
  return 0;
} catch (const std::exception &e) {
  std::fprintf(stderr, "tunekit_replay: %s\n", e.what());
  return 1;
}
