/// \file entry.cpp
/// The winner cache as Python sees it: entries read and validated by the core's reader and
/// handed over as plain data (every field typed, as `cache_entry` holds it), the cache root, and
/// listing and removing entries. The report (python/tunekit/report/) reads caches only this way.

#include "binding.hpp"

#include <tunekit/environment.hpp>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

namespace tunekit::python {

using namespace nb::literals;

namespace {

template <class T> nb::object optional_to_py(const std::optional<T> &v) {
  return v ? nb::cast(*v) : nb::none();
}

nb::dict stats_to_py(const sample_stats &s) {
  nb::dict d;
  d["mean"] = s.mean;
  d["median"] = s.median;
  d["min"] = s.min;
  d["max"] = s.max;
  d["stddev"] = s.stddev;
  if (s.count > 0) { // absent where unknown, as in the file
    d["count"] = s.count;
    d["outliers"] = s.outliers;
  }
  return d;
}

nb::dict policy_to_py(const measure_policy &p) {
  nb::dict d;
  d["warmup"] = p.warmup;
  d["runs"] = p.runs;
  d["statistic"] = std::string(to_string(p.stat));
  if (p.early_stop_factor != 0) {
    d["early_stop_factor"] = p.early_stop_factor;
    d["early_stop_after"] = p.early_stop_after;
  }
  return d;
}

nb::dict candidate_to_py(const candidate_record &r) {
  nb::dict d;
  d["config"] = config_to_py(r.config);
  d["template_id"] = r.config.template_id();
  d["status"] = std::string(to_string(r.status));
  const bool ok = r.status == candidate_status::ok;
  d["time_ms"] = ok && std::isfinite(r.time_ms) ? nb::cast(r.time_ms) : nb::none();
  d["stats"] = ok ? nb::object(stats_to_py(r.stats)) : nb::none();
  d["reason"] = text_to_py(r.reason);
  d["prepare_ms"] = optional_to_py(r.prepare_ms);
  d["measured_on"] = optional_to_py(r.measured_on); // the parallel split's measuring rank
  return d;
}

nb::dict search_to_py(const search_record &r) {
  nb::dict d;
  d["strategy"] = r.strategy;
  d["seed"] = r.seed;
  d["max_evaluations"] = r.max_evaluations;
  d["max_time_s"] = r.max_time_s;
  d["patience"] = r.patience;
  d["batch_size"] = r.batch_size;
  d["lookahead"] = r.lookahead;
  d["space_size"] = r.space_size;
  d["evaluations"] = r.evaluations;
  d["stop"] = r.stop;
  d["transferred"] = r.transferred;
  d["order"] = r.order;
  return d;
}

nb::dict space_to_py(const space_record &r) {
  nb::dict d;
  d["size"] = r.size;
  d["pruned"] = r.pruned;
  d["digest"] = r.digest;
  d["winner"] = r.winner;
  d["default"] = r.default_candidate ? nb::object(nb::cast(*r.default_candidate)) : nb::none();
  return d;
}

} // namespace

nb::dict entry_to_py(const cache_entry &e) {
  nb::dict d;
  d["schema"] = std::string(cache_entry::schema);
  nb::dict fn;
  fn["name"] = e.function.name;
  fn["version"] = e.function.version;
  d["function"] = fn;
  d["key"] = key_to_py(e.key);
  d["hardware"] = hardware_to_py(e.hardware);
  nb::dict deps;
  for (const auto &[name, version] : e.dependencies) {
    deps[nb::str(name.c_str(), name.size())] = version;
  }
  d["dependencies"] = deps;
  nb::dict winner;
  winner["config"] = config_to_py(e.winner);
  winner["template_id"] = e.winner.template_id();
  winner["index"] = e.winner_index;
  d["winner"] = winner;
  nb::list cands;
  for (const auto &c : e.candidates) {
    cands.append(candidate_to_py(c));
  }
  d["candidates"] = cands;
  d["policy"] = policy_to_py(e.policy);
  d["measurer"] = e.measurer;
  d["world_size"] = e.world_size;
  d["timestamp"] = e.timestamp;
  d["key_buckets"] = e.key_buckets;
  d["search"] = e.search ? nb::object(search_to_py(*e.search)) : nb::none();
  if (e.rerank) {
    const rerank_record &r = *e.rerank;
    nb::list leaders;
    for (std::size_t l = 0; l < r.leaders.size(); ++l) {
      nb::dict one;
      one["index"] = r.leaders[l];
      one["score_ms"] = std::isfinite(r.scores[l]) ? nb::object(nb::cast(r.scores[l])) : nb::none();
      one["stats"] = r.stats[l].count > 0 ? nb::object(stats_to_py(r.stats[l])) : nb::none();
      leaders.append(one);
    }
    nb::dict rr;
    rr["band"] = r.band;
    rr["rounds"] = r.rounds;
    rr["runs"] = r.runs;
    rr["winner_before"] = r.winner_before;
    rr["leaders"] = leaders;
    d["rerank"] = rr;
  } else {
    d["rerank"] = nb::none();
  }
  d["space"] = e.space ? nb::object(space_to_py(*e.space)) : nb::none();
  return d;
}

nb::dict load_result_to_py(const load_result<cache_entry> &r) {
  nb::dict d;
  d["status"] = std::string(to_string(r.status));
  d["detail"] = text_to_py(r.detail); // a parser's message may quote the file's bytes
  d["path"] = r.path.string();
  d["entry"] = r.value ? nb::object(nb::str(to_json(*r.value).c_str())) : nb::none();
  d["record"] = r.value ? nb::object(entry_to_py(*r.value)) : nb::none();
  // The tuning log written beside the entry, when there is one.
  std::filesystem::path log = r.path;
  log.replace_extension(".log");
  std::error_code ec;
  d["log_path"] = r.value && std::filesystem::is_regular_file(log, ec) ? log.string() : "";
  return d;
}

void bind_cache(nb::module_ &m) {
  m.def("cache_dir", [] { return environment::from_env().cache_dir.string(); });
  m.def(
      "read_entry",
      [](const std::string &path) { return load_result_to_py(winner_cache::read(path)); }, "path"_a,
      "Reads and validates one winner cache entry file.");
  m.def(
      "entry_path",
      [](const std::string &root, const std::string &text) {
        const cache_entry e = cache_entry_from_json(text);
        return winner_cache(root).entry_path(e.function, e.hardware, e.key).string();
      },
      "root"_a, "entry"_a,
      "Where the winner cache under `root` keeps the entry whose JSON text is `entry`.");
  m.def(
      "list_entries",
      [](const std::string &root, const std::string &function) {
        std::vector<std::string> out;
        for (const auto &p : winner_cache(root).list(function)) {
          out.push_back(p.string());
        }
        return out;
      },
      "root"_a, "function"_a = "");
  m.def(
      "remove_entries",
      [](const std::string &root, const std::string &function) {
        return winner_cache(root).remove(function).size();
      },
      "root"_a, "function"_a = "");
}

} // namespace tunekit::python
