#include "cache_entry.hpp"

#include "format.hpp"
#include "json_io.hpp"
#include "sha256.hpp"
#include "timestamp.hpp"

#include <tunekit/error.hpp>
#include <tunekit/winner_cache.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <sstream>
#include <string>

// The format of one winner cache entry: how a search's record becomes one, its JSON form (written
// and validated) and the tuning log beside it. Where entries live and how they are stored is
// winner_cache.cpp.

namespace tunekit {

using detail::json;

std::string_view to_string(candidate_status s) noexcept {
  switch (s) {
  case candidate_status::ok:
    return "ok";
  case candidate_status::failed:
    return "failed";
  case candidate_status::wrong_result:
    return "wrong_result";
  case candidate_status::pruned:
    return "pruned";
  }
  return "unknown";
}

namespace {
candidate_status status_from_string(const std::string &s, std::string_view what) {
  for (auto st : {candidate_status::ok, candidate_status::failed, candidate_status::wrong_result,
                  candidate_status::pruned}) {
    if (s == to_string(st)) {
      return st;
    }
  }
  throw error("'" + std::string(what) + "' is not a candidate status: '" + s + "'");
}

json config_record(const config &c) {
  json j = json::object();
  if (!c.template_id().empty()) {
    j["template_id"] = c.template_id();
  }
  j["config"] = detail::to_json(c);
  return j;
}

config config_record_from_json(const json &j, std::string_view what) {
  config c = detail::config_from_json(detail::member(j, "config", json::value_t::object, what),
                                      std::string(what) + ".config");
  if (j.contains("template_id")) {
    c.set_template_id(detail::string_member(j, "template_id", what));
  }
  return c;
}

json time_json(double t) { return std::isfinite(t) ? json(t) : json(nullptr); }

// The non-negative integer member `name` of the object `j` (called `what` in messages).
std::size_t count_member(const json &j, std::string_view name, std::string_view what) {
  const std::int64_t v = detail::int_member(j, name, what);
  if (v < 0) {
    throw error("'" + std::string(what) + "." + std::string(name) + "' must not be negative");
  }
  return static_cast<std::size_t>(v);
}

// Schema /1 named the measuring rank of the parallel split only in the reason: "measured on rank
// N" (ok) or "failed on rank N".
std::optional<int> rank_in_reason(std::string_view reason) {
  for (const std::string_view prefix : {"measured on rank ", "failed on rank "}) {
    if (reason.starts_with(prefix)) {
      const std::string_view digits = reason.substr(prefix.size());
      int rank = 0;
      const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), rank);
      if (ec == std::errc{} && end == digits.data() + digits.size() && rank >= 0) {
        return rank;
      }
    }
  }
  return std::nullopt;
}

} // namespace

namespace detail {

std::string space_digest(const config_space &space) {
  std::string text;
  for (const auto &c : space) {
    text += c.template_id();
    text += '\x1f';
    text += c.to_string();
    text += '\x1e';
  }
  return sha256_hex(text);
}

cache_entry make_entry(const entry_context &ctx, search_result found) {
  cache_entry e;
  e.function = ctx.function;
  e.key = ctx.k;
  e.hardware = ctx.hw;
  e.dependencies = ctx.deps;
  e.winner = found.records[found.winner].config;
  e.winner_index = found.winner;
  e.space =
      space_record{ctx.candidates, ctx.pruned, ctx.space_digest, found.positions[found.winner]};
  if (!found.positions.empty() && found.positions.front() == 0) {
    e.space->default_candidate = 0; // records are in candidate order: the first is the default
  }
  e.candidates = std::move(found.records);
  e.policy = ctx.policy;
  e.measurer = ctx.measurer;
  e.world_size = ctx.world_size;
  e.timestamp = utc_timestamp();
  e.key_buckets = ctx.key_buckets;
  e.search = std::move(found.strategy);
  e.rerank = std::move(found.rerank); // records are the entry's candidates, in order
  return e;
}

} // namespace detail

std::string to_json(const cache_entry &e) {
  json j;
  j["schema"] = cache_entry::schema;
  j["function"] = json{{"name", e.function.name}, {"version", e.function.version}};
  j["key"] = detail::to_json(e.key);
  j["hardware"] = detail::to_json(e.hardware);
  j["hardware"]["digest"] = e.hardware.digest();
  j["dependencies"] = json::object();
  for (const auto &[name, ver] : e.dependencies) {
    j["dependencies"][name] = ver;
  }
  json winner = config_record(e.winner);
  winner["index"] = e.winner_index;
  j["winner"] = std::move(winner);
  j["candidates"] = json::array();
  for (const auto &c : e.candidates) {
    json r = config_record(c.config);
    r["status"] = std::string(to_string(c.status));
    r["time_ms"] = time_json(c.time_ms);
    if (c.status == candidate_status::ok) {
      r["stats"] = detail::to_json(c.stats);
    }
    if (!c.reason.empty()) {
      r["reason"] = detail::utf8_text(c.reason);
    }
    if (c.prepare_ms) {
      r["prepare_ms"] = *c.prepare_ms;
    }
    if (c.measured_on) {
      r["measured_on"] = *c.measured_on;
    }
    j["candidates"].push_back(std::move(r));
  }
  j["policy"] = detail::to_json(e.policy);
  j["measurer"] = e.measurer;
  j["world_size"] = e.world_size;
  j["timestamp"] = e.timestamp;
  if (!e.key_buckets.empty()) {
    j["key_buckets"] = e.key_buckets;
  }
  if (e.search) {
    const search_record &r = *e.search;
    j["search"] = json{{"strategy", r.strategy},
                       {"seed", r.seed},
                       {"max_evaluations", r.max_evaluations},
                       {"max_time_s", r.max_time_s},
                       {"patience", r.patience},
                       {"batch_size", r.batch_size},
                       {"lookahead", r.lookahead},
                       {"space_size", r.space_size},
                       {"evaluations", r.evaluations},
                       {"stop", r.stop},
                       {"transferred", r.transferred}};
    if (!r.order.empty()) {
      j["search"]["order"] = r.order;
    }
  }
  if (e.rerank) {
    const rerank_record &r = *e.rerank;
    json leaders = json::array();
    for (std::size_t l = 0; l < r.leaders.size(); ++l) {
      json one{{"index", r.leaders[l]}, {"score_ms", time_json(r.scores[l])}};
      if (r.stats[l].count > 0) {
        one["stats"] = detail::to_json(r.stats[l]);
      }
      leaders.push_back(std::move(one));
    }
    j["rerank"] = json{{"band", r.band},
                       {"rounds", r.rounds},
                       {"runs", r.runs},
                       {"winner_before", r.winner_before},
                       {"leaders", std::move(leaders)}};
  }
  if (e.space) {
    j["space"] = json{{"size", e.space->size},
                      {"pruned", e.space->pruned},
                      {"digest", e.space->digest},
                      {"winner", e.space->winner}};
    if (e.space->default_candidate) {
      j["space"]["default"] = *e.space->default_candidate;
    }
  }
  return detail::dump(j, 2) + "\n";
}

namespace {

// The `rerank` member of an entry whose candidates and winner are read: every index names an ok
// candidate, once; the winner is one of the leaders.
rerank_record rerank_from_json(const json &rj, const cache_entry &e) {
  auto count = [&](std::string_view name) { return count_member(rj, name, "rerank"); };
  rerank_record r;
  r.band = detail::member(rj, "band", json::value_t::number_float, "rerank").get<double>();
  r.rounds = static_cast<int>(count("rounds"));
  r.runs = static_cast<int>(count("runs"));
  r.winner_before = count("winner_before");
  const std::size_t n = e.candidates.size();
  if (r.winner_before >= n) {
    throw error("'rerank.winner_before' " + std::to_string(r.winner_before) + " is outside the " +
                std::to_string(n) + " candidates");
  }
  std::vector<bool> seen(n, false);
  bool has_winner = false;
  for (const json &l : detail::member(rj, "leaders", json::value_t::array, "rerank")) {
    const std::size_t i = count_member(l, "index", "rerank.leaders");
    if (i >= n || seen[i] || e.candidates[i].status != candidate_status::ok) {
      throw error("'rerank.leaders' must name distinct valid candidates below " +
                  std::to_string(n) + ", got " + std::to_string(i));
    }
    seen[i] = true;
    has_winner = has_winner || i == e.winner_index;
    r.leaders.push_back(i);
    const json &score = l.contains("score_ms") ? l["score_ms"] : json();
    if (score.is_null()) {
      r.scores.push_back(std::numeric_limits<double>::infinity()); // failed in the re-rank
    } else if (score.is_number() && std::isfinite(score.get<double>()) &&
               score.get<double>() >= 0) {
      r.scores.push_back(score.get<double>());
    } else {
      throw error("'rerank.leaders.score_ms' must be a non-negative number or null, got " +
                  score.dump());
    }
    r.stats.push_back(l.contains("stats")
                          ? detail::stats_from_json(
                                detail::member(l, "stats", json::value_t::object, "rerank.leaders"),
                                "rerank.leaders.stats")
                          : sample_stats{});
  }
  if (r.leaders.size() < 2 || !has_winner) {
    throw error("'rerank.leaders' must hold at least two candidates, the winner among them");
  }
  return r;
}

} // namespace

cache_entry cache_entry_from_json(std::string_view text) {
  const json j = detail::parse(text, "cache entry");
  if (!j.is_object()) {
    throw error("cache entry is not a JSON object");
  }
  const std::string schema = detail::string_member(j, "schema", "");
  const bool v1 = schema == cache_entry::schema_v1;
  if (schema != cache_entry::schema && !v1) {
    throw error("cache entry has schema '" + schema + "', expected '" +
                std::string(cache_entry::schema) + "'");
  }
  cache_entry e;
  const json &fn = detail::member(j, "function", json::value_t::object, "");
  e.function.name = detail::string_member(fn, "name", "function");
  e.function.version = detail::string_member(fn, "version", "function");
  e.key = detail::key_from_json(detail::member(j, "key", json::value_t::array, ""), "key");
  const json &hw = detail::member(j, "hardware", json::value_t::object, "");
  e.hardware = detail::hardware_from_json(hw, "hardware");
  if (detail::string_member(hw, "digest", "hardware") != e.hardware.digest()) {
    throw error("'hardware.digest' does not match the recorded hardware");
  }
  for (const auto &[name, ver] :
       detail::member(j, "dependencies", json::value_t::object, "").items()) {
    if (!ver.is_string()) {
      throw error("'dependencies." + name + "' must be a string");
    }
    e.dependencies[name] = ver.get<std::string>();
  }
  const json &cands = detail::member(j, "candidates", json::value_t::array, "");
  for (std::size_t i = 0; i < cands.size(); ++i) {
    const std::string what = "candidates[" + std::to_string(i) + "]";
    candidate_record r;
    r.config = config_record_from_json(cands[i], what);
    r.status = status_from_string(detail::string_member(cands[i], "status", what), what);
    const json &t = cands[i].contains("time_ms") ? cands[i]["time_ms"] : json();
    if (r.status == candidate_status::ok) {
      r.time_ms =
          detail::member(cands[i], "time_ms", json::value_t::number_float, what).get<double>();
      if (!std::isfinite(r.time_ms) || r.time_ms < 0) {
        throw error("'" + what + ".time_ms' is not a valid time");
      }
      r.stats = detail::stats_from_json(
          detail::member(cands[i], "stats", json::value_t::object, what), what + ".stats");
    } else if (!t.is_null()) {
      throw error("'" + what + ".time_ms' must be null for a candidate that is not ok");
    }
    if (cands[i].contains("reason")) {
      r.reason = detail::string_member(cands[i], "reason", what);
    }
    if (cands[i].contains("prepare_ms")) {
      const json &p = cands[i]["prepare_ms"];
      if (!p.is_number() || !std::isfinite(p.get<double>()) || p.get<double>() < 0) {
        throw error("'" + what + ".prepare_ms' is not a valid time");
      }
      r.prepare_ms = p.get<double>();
    }
    if (v1) {
      r.measured_on = rank_in_reason(r.reason);
    } else if (cands[i].contains("measured_on")) {
      const std::int64_t rank = detail::int_member(cands[i], "measured_on", what);
      if (rank < 0 || rank > std::numeric_limits<int>::max()) {
        throw error("'" + what + ".measured_on' is not a rank");
      }
      r.measured_on = static_cast<int>(rank);
    }
    e.candidates.push_back(std::move(r));
  }
  const json &winner = detail::member(j, "winner", json::value_t::object, "");
  e.winner = config_record_from_json(winner, "winner");
  const std::int64_t index = detail::int_member(winner, "index", "winner");
  if (index < 0 || static_cast<std::size_t>(index) >= e.candidates.size()) {
    throw error("'winner.index' " + std::to_string(index) + " is outside the " +
                std::to_string(e.candidates.size()) + " candidates");
  }
  e.winner_index = static_cast<std::size_t>(index);
  const candidate_record &w = e.candidates[e.winner_index];
  if (!(w.config == e.winner) || w.status != candidate_status::ok) {
    throw error("'winner' is not the valid candidate its index names");
  }
  e.policy =
      detail::policy_from_json(detail::member(j, "policy", json::value_t::object, ""), "policy");
  e.measurer = detail::string_member(j, "measurer", "");
  e.world_size = static_cast<int>(detail::int_member(j, "world_size", ""));
  e.timestamp = detail::string_member(j, "timestamp", "");
  if (j.contains("key_buckets")) {
    e.key_buckets = detail::string_member(j, "key_buckets", "");
  }
  if (j.contains("search")) {
    const json &sj = detail::member(j, "search", json::value_t::object, "");
    auto count = [&](std::string_view name) { return count_member(sj, name, "search"); };
    search_record r;
    r.strategy = detail::string_member(sj, "strategy", "search");
    r.seed = static_cast<std::uint64_t>(count("seed"));
    r.max_evaluations = count("max_evaluations");
    r.max_time_s =
        detail::member(sj, "max_time_s", json::value_t::number_float, "search").get<double>();
    r.patience = count("patience");
    r.batch_size = count("batch_size");
    r.lookahead = sj.contains("lookahead") ? count("lookahead") : 0; // absent before it was kept
    r.space_size = count("space_size");
    r.evaluations = count("evaluations");
    r.stop = detail::string_member(sj, "stop", "search");
    r.transferred = count("transferred");
    if (sj.contains("order")) {
      const json &order = detail::member(sj, "order", json::value_t::array, "search");
      std::vector<bool> seen(e.candidates.size(), false);
      for (const json &v : order) {
        if (!v.is_number_unsigned() || v.get<std::uint64_t>() >= e.candidates.size() ||
            seen[v.get<std::size_t>()]) {
          throw error("'search.order' must list distinct candidate indices below " +
                      std::to_string(e.candidates.size()) + ", got " + v.dump());
        }
        seen[v.get<std::size_t>()] = true;
        r.order.push_back(v.get<std::size_t>());
      }
    }
    e.search = std::move(r);
  }
  if (j.contains("rerank")) {
    e.rerank = rerank_from_json(detail::member(j, "rerank", json::value_t::object, ""), e);
  }
  if (j.contains("space")) {
    const json &sj = detail::member(j, "space", json::value_t::object, "");
    auto count = [&](std::string_view name) { return count_member(sj, name, "space"); };
    space_record r;
    r.size = count("size");
    r.pruned = count("pruned");
    r.digest = detail::string_member(sj, "digest", "space");
    r.winner = count("winner");
    if (r.winner >= r.size || r.pruned >= r.size) {
      throw error("'space' holds a winner position or a pruned count outside its " +
                  std::to_string(r.size) + " candidates");
    }
    if (sj.contains("default")) { // absent before it was recorded
      r.default_candidate = count("default");
      if (*r.default_candidate >= e.candidates.size()) {
        throw error("'space.default' " + std::to_string(*r.default_candidate) + " is outside the " +
                    std::to_string(e.candidates.size()) + " candidates");
      }
    }
    e.space = std::move(r);
  }
  return e;
}

std::vector<const candidate_record *> fastest_candidates(const cache_entry &e, std::size_t k) {
  std::vector<const candidate_record *> ok;
  for (const auto &c : e.candidates) {
    if (c.status == candidate_status::ok) {
      ok.push_back(&c);
    }
  }
  // The winner first (a re-rank may have chosen it over a candidate the search timed faster),
  // then the others by time.
  const candidate_record *w =
      e.winner_index < e.candidates.size() ? &e.candidates[e.winner_index] : nullptr;
  std::stable_sort(ok.begin(), ok.end(), [w](const auto *a, const auto *b) {
    if (a == w || b == w) {
      return a == w && b != w;
    }
    return a->time_ms < b->time_ms;
  });
  if (ok.size() > k) {
    ok.resize(k);
  }
  return ok;
}

std::string tuning_log(const cache_entry &e, double seconds) {
  std::ostringstream s;
  s << e.timestamp << " tuner '" << e.function.name << "' version '" << e.function.version << "'\n"
    << "key " << e.key.to_string() << "\nhardware " << e.hardware.to_string() << "\n"
    << "measurer " << e.measurer << ", " << e.policy.warmup << " warmup + " << e.policy.runs
    << " timed runs, " << to_string(e.policy.stat);
  if (e.policy.early_stop_factor != 0) {
    s << ", early stop after " << e.policy.early_stop_after << " runs beyond "
      << e.policy.early_stop_factor << " x best";
  }
  s << "\n";
  if (e.search) {
    const search_record &r = *e.search;
    s << "strategy " << r.strategy << " seed " << r.seed << ": " << r.evaluations << " of "
      << r.space_size << " candidates measured (budget " << r.max_evaluations << " evaluations";
    if (r.max_time_s > 0) {
      s << ", " << r.max_time_s << " s";
    }
    if (r.patience > 0) {
      s << ", patience " << r.patience;
    }
    s << "; batch " << r.batch_size;
    if (r.lookahead > 0) {
      s << ", " << r.lookahead << " proposed ahead";
    }
    s << "; " << r.transferred << " transferred start points)"
      << ", stopped by " << r.stop << "\n";
  }
  for (std::size_t i = 0; i < e.candidates.size(); ++i) {
    const auto &r = e.candidates[i];
    s << "#" << i << " [" << r.config.to_string() << "] " << to_string(r.status);
    if (r.status == candidate_status::ok) {
      s << " " << detail::format_ms(r.time_ms) << " (min " << detail::format_ms(r.stats.min)
        << ", max " << detail::format_ms(r.stats.max) << ", stddev "
        << detail::format_ms(r.stats.stddev);
      if (r.stats.count > 0) {
        s << ", " << r.stats.count << " runs";
        if (r.stats.outliers > 0) {
          s << ", " << r.stats.outliers << " outliers";
        }
      }
      s << ")";
      if (!r.reason.empty()) {
        s << "; " << r.reason;
      }
    } else if (!r.reason.empty()) {
      s << ": " << r.reason;
    }
    if (r.prepare_ms) {
      s << " [prepared in " << detail::format_ms(*r.prepare_ms) << "]";
    }
    s << "\n";
  }
  if (e.space && e.space->pruned > 0) {
    s << e.space->pruned << " of " << e.space->size << " configs pruned (not listed)\n";
  }
  if (e.rerank) {
    const rerank_record &r = *e.rerank;
    s << "re-rank of " << r.leaders.size() << " leaders within " << r.band * 100
      << "% of the best, " << r.rounds << " interleaved rounds of " << r.runs << " runs:";
    for (std::size_t l = 0; l < r.leaders.size(); ++l) {
      s << " #" << r.leaders[l] << " "
        << (std::isfinite(r.scores[l]) ? detail::format_ms(r.scores[l]) : std::string("failed"));
    }
    s << (r.winner_before == e.winner_index
              ? "; the search's winner stands\n"
              : "; it replaces #" + std::to_string(r.winner_before) + "\n");
  }
  s << "winner #" << e.winner_index << " [" << e.winner.to_string() << "] after "
    << detail::format_ms(seconds * 1e3) << "\n";
  return s.str();
}

} // namespace tunekit
