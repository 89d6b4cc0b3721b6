// tunekit_replay: runs search strategies over measured spaces (Kernel Tuner cache files) for many
// seeds and reports the mean fraction of optimum (best time in the file / best time found) at
// several budgets. An evaluation is a distinct config measured for the first time, repeats are
// free, and the space is the set of configs in the file: Kernel Tuner's counting.
//
//   tunekit_replay [--strategy hybrid,tpe,...] [--seeds 20] [--first-seed 0]
//                  [--budgets 25,100,400] [--batch 1] [--lookahead 0] [--transfer [K]] [--json
//                  out.json] FILE...
//
// Seeds first-seed .. first-seed + seeds - 1 are run for every strategy and file.
//
// With --transfer, each file starts from the K fastest configs (default 5) of every other file of
// the same kernel (leave one GPU out) that are not one parameter from a faster one taken
// (`tunekit::distinct_best`, as the tuner's transfer picks them); files of a kernel are those with
// the same kernel_name.

#include <tunekit/error.hpp>
#include <tunekit/strategy/replay.hpp>
#include <tunekit/strategy/run_search.hpp>
#include <tunekit/strategy/search_space.hpp>
#include <tunekit/strategy/strategy.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
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
    } else if (a == "--json") {
      o.json_path = next();
    } else if (a == "-h" || a == "--help") {
      std::cout << "usage: tunekit_replay [--strategy a,b] [--seeds N] [--first-seed S] "
                   "[--budgets 25,100,400] "
                   "[--batch B] [--lookahead W] [--transfer [K]] [--json FILE] FILE...\n";
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

} // namespace

int main(int argc, char **argv) try {
  const options o = parse(argc, argv);
  std::vector<tunekit::replay_table> tables;
  for (const auto &f : o.files) {
    tables.push_back(tunekit::load_replay_table(f));
  }
  const std::size_t max_budget = o.budgets.back();
  nlohmann::json out = nlohmann::json::object();
  out["seeds"] = o.seeds;
  out["first_seed"] = o.first_seed;
  out["budgets"] = o.budgets;
  out["batch"] = o.batch;
  out["lookahead"] = o.lookahead;
  out["transfer_top_k"] = o.transfer;
  out["results"] = nlohmann::json::array();

  std::printf("| strategy | file |");
  for (auto b : o.budgets) {
    std::printf(" %zu |", b);
  }
  std::printf(" us/proposal |\n|---|---|");
  for (std::size_t k = 0; k <= o.budgets.size(); ++k) {
    std::printf("---|");
  }
  std::printf("\n");
  for (const auto &name : o.strategies) {
    std::vector<double> mean(o.budgets.size(), 0.0);
    for (std::size_t f = 0; f < tables.size(); ++f) {
      const auto &t = tables[f];
      std::vector<std::size_t> starts;
      if (o.transfer > 0) {
        std::vector<tunekit::config> from;
        for (std::size_t g = 0; g < tables.size(); ++g) {
          if (g != f && tables[g].kernel_name == t.kernel_name) {
            auto best = tunekit::distinct_best(tables[g].best_configs(SIZE_MAX), o.transfer);
            from.insert(from.end(), best.begin(), best.end());
          }
        }
        starts = tunekit::transfer_indices(t.space, from);
      }
      std::vector<double> frac(o.budgets.size(), 0.0);
      double seconds = 0;
      std::size_t proposals = 0;
      for (std::size_t seed = 0; seed < o.seeds; ++seed) {
        auto strat = tunekit::make_strategy(name);
        tunekit::search_options so;
        so.seed = o.first_seed + seed;
        so.batch_size = o.batch;
        so.lookahead = o.lookahead;
        so.start_points = starts;
        auto r = tunekit::run_search(t.space, *strat, {.max_evaluations = max_budget},
                                     t.evaluator(), so);
        seconds += r.strategy_seconds;
        proposals += r.proposals;
        for (std::size_t b = 0; b < o.budgets.size(); ++b) {
          const std::size_t at = std::min(o.budgets[b], r.trace.size());
          const double found = at == 0 ? std::numeric_limits<double>::infinity() : r.trace[at - 1];
          frac[b] += t.best_time_ms / found;
        }
      }
      nlohmann::json row = {{"strategy", name}, {"file", short_name(t.source)}};
      std::printf("| %s | %s |", name.c_str(), short_name(t.source).c_str());
      for (std::size_t b = 0; b < o.budgets.size(); ++b) {
        frac[b] /= static_cast<double>(o.seeds);
        mean[b] += frac[b] / static_cast<double>(tables.size());
        row["fraction"][std::to_string(o.budgets[b])] = frac[b];
        std::printf(" %.3f |", frac[b]);
      }
      const double us = proposals ? 1e6 * seconds / static_cast<double>(proposals) : 0.0;
      row["us_per_proposal"] = us;
      std::printf(" %.1f |\n", us);
      out["results"].push_back(row);
    }
    std::printf("| %s | **mean** |", name.c_str());
    for (std::size_t b = 0; b < o.budgets.size(); ++b) {
      std::printf(" **%.3f** |", mean[b]);
      out["mean"][name][std::to_string(o.budgets[b])] = mean[b];
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
