#include "format.hpp"
#include "json_io.hpp"
#include "read_file.hpp"
#include "sha256.hpp"

#include <tunekit/error.hpp>
#include <tunekit/winner_cache.hpp>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>

#include <fcntl.h>
#include <unistd.h>

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

std::string file_safe(std::string_view name) {
  std::string out;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    out += ok ? c : '_';
  }
  if (out.empty() || out == "." || out == "..") {
    out = "_" + out;
  }
  return out;
}
} // namespace

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
      r["reason"] = c.reason;
    }
    if (c.prepare_ms) {
      r["prepare_ms"] = *c.prepare_ms;
    }
    j["candidates"].push_back(std::move(r));
  }
  j["policy"] = detail::to_json(e.policy);
  j["measurer"] = e.measurer;
  j["world_size"] = e.world_size;
  j["timestamp"] = e.timestamp;
  if (e.search) {
    const search_record &r = *e.search;
    j["search"] = json{{"strategy", r.strategy},
                       {"seed", r.seed},
                       {"max_evaluations", r.max_evaluations},
                       {"max_time_s", r.max_time_s},
                       {"patience", r.patience},
                       {"batch_size", r.batch_size},
                       {"space_size", r.space_size},
                       {"evaluations", r.evaluations},
                       {"stop", r.stop},
                       {"transferred", r.transferred}};
  }
  return j.dump(2) + "\n";
}

cache_entry cache_entry_from_json(std::string_view text) {
  const json j = detail::parse(text, "cache entry");
  if (!j.is_object()) {
    throw error("cache entry is not a JSON object");
  }
  const std::string schema = detail::string_member(j, "schema", "");
  if (schema != cache_entry::schema) {
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
  if (j.contains("search")) {
    const json &sj = detail::member(j, "search", json::value_t::object, "");
    auto count = [&](std::string_view name) {
      const std::int64_t v = detail::int_member(sj, name, "search");
      if (v < 0) {
        throw error("'search." + std::string(name) + "' must not be negative");
      }
      return static_cast<std::size_t>(v);
    };
    search_record r;
    r.strategy = detail::string_member(sj, "strategy", "search");
    r.seed = static_cast<std::uint64_t>(count("seed"));
    r.max_evaluations = count("max_evaluations");
    r.max_time_s =
        detail::member(sj, "max_time_s", json::value_t::number_float, "search").get<double>();
    r.patience = count("patience");
    r.batch_size = count("batch_size");
    r.space_size = count("space_size");
    r.evaluations = count("evaluations");
    r.stop = detail::string_member(sj, "stop", "search");
    r.transferred = count("transferred");
    e.search = std::move(r);
  }
  return e;
}

namespace {
constexpr std::string_view pinned_marker = "pinned ";

// The name a marker value ("pinned NAME") stands for, or empty when `v` is not a marker.
std::string_view pinned_name(const value &v) {
  if (v.type() != value_type::string) {
    return {};
  }
  const std::string_view s = v.as_string();
  return s.starts_with(pinned_marker) && s.size() > pinned_marker.size()
             ? s.substr(pinned_marker.size())
             : std::string_view{};
}
} // namespace

key stored_key(const key &input, const config &pinned) {
  key k = input;
  for (const auto &f : pinned) {
    k.push_back(value(std::string(pinned_marker) + f.name));
    k.push_back(f.value);
  }
  return k;
}

stored_key_parts split_stored_key(const key &stored) {
  std::size_t end = stored.size();
  while (end >= 2 && !pinned_name(stored[end - 2]).empty()) {
    end -= 2;
  }
  stored_key_parts parts;
  for (std::size_t i = 0; i < end; ++i) {
    parts.input.push_back(stored[i]);
  }
  // Walked forward, so the pinned values keep the order the tuner appended them in.
  for (std::size_t i = end; i < stored.size(); i += 2) {
    parts.pinned.set(pinned_name(stored[i]), stored[i + 1]);
  }
  return parts;
}

std::string cache_digest(const function_identity &fn, const hardware_info &hw, const key &k) {
  const json id{{"function", fn.name},
                {"version", fn.version},
                {"hardware", hw.digest()},
                {"key", detail::to_json(k)}};
  return detail::sha256_hex(id.dump());
}

winner_cache::winner_cache(std::filesystem::path root) : m_root(std::move(root)) {}

std::filesystem::path winner_cache::function_dir(std::string_view function) const {
  return m_root / "autotune" / file_safe(function);
}

std::filesystem::path winner_cache::entry_path(const function_identity &fn, const hardware_info &hw,
                                               const key &k) const {
  return function_dir(fn.name) / (cache_digest(fn, hw, k) + ".json");
}

load_result<cache_entry> winner_cache::load(const function_identity &fn, const hardware_info &hw,
                                            const key &k) const {
  load_result<cache_entry> out;
  out.path = entry_path(fn, hw, k);
  std::error_code ec;
  if (!std::filesystem::exists(out.path, ec)) {
    return out;
  }
  std::ifstream in(out.path, std::ios::binary);
  if (!in) {
    out.status = load_status::unreadable;
    out.detail = "cannot be opened";
    return out;
  }
  std::stringstream buf;
  buf << in.rdbuf();
  try {
    cache_entry e = cache_entry_from_json(buf.str());
    out.status = load_status::identity_mismatch;
    if (!(e.function == fn)) {
      out.detail =
          "belongs to function '" + e.function.name + "' version '" + e.function.version + "'";
    } else if (!(e.hardware == hw)) {
      out.detail = "was measured on other hardware: " + e.hardware.to_string();
    } else if (!(e.key == k)) {
      out.detail = "holds key " + e.key.to_string() + ", not " + k.to_string();
    } else {
      out.status = load_status::found;
      out.value = std::move(e);
    }
  } catch (const error &e) {
    out.status = load_status::invalid;
    out.detail = e.what();
  }
  return out;
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
    s << "; batch " << r.batch_size << "; " << r.transferred << " transferred start points)"
      << ", stopped by " << r.stop << "\n";
  }
  for (std::size_t i = 0; i < e.candidates.size(); ++i) {
    const auto &r = e.candidates[i];
    s << "#" << i << " [" << r.config.to_string() << "] " << to_string(r.status);
    if (r.status == candidate_status::ok) {
      s << " " << detail::format_ms(r.time_ms) << " (min " << detail::format_ms(r.stats.min)
        << ", max " << detail::format_ms(r.stats.max) << ", stddev "
        << detail::format_ms(r.stats.stddev) << ")";
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
  s << "winner #" << e.winner_index << " [" << e.winner.to_string() << "] after "
    << detail::format_ms(seconds * 1e3) << "\n";
  return s.str();
}

std::filesystem::path winner_cache::store(const cache_entry &e, std::string_view log_text) const {
  const std::filesystem::path path = entry_path(e.function, e.hardware, e.key);
  if (!log_text.empty()) {
    auto log_path = path;
    log_path.replace_extension(".log");
    write_file_atomically(log_path, log_text);
  }
  write_file_atomically(path, to_json(e));
  return path;
}

std::vector<std::filesystem::path> winner_cache::list(std::string_view function) const {
  std::vector<std::filesystem::path> out;
  const auto base = function.empty() ? m_root / "autotune" : function_dir(function);
  std::error_code ec;
  if (!std::filesystem::is_directory(base, ec)) {
    return out;
  }
  for (auto it = std::filesystem::recursive_directory_iterator(base, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_regular_file(ec) && it->path().extension() == ".json") {
      out.push_back(it->path());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

load_result<cache_entry> winner_cache::read(const std::filesystem::path &path) {
  load_result<cache_entry> out;
  out.path = path;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    return out;
  }
  const auto text = detail::read_file(path);
  if (!text) {
    out.status = load_status::unreadable;
    out.detail = "cannot be read";
    return out;
  }
  try {
    cache_entry e = cache_entry_from_json(*text);
    const std::string want = cache_digest(e.function, e.hardware, e.key) + ".json";
    if (path.filename() != want) {
      out.status = load_status::identity_mismatch;
      out.detail = "is named " + path.filename().string() + " but its identity names it " + want;
      return out;
    }
    out.status = load_status::found;
    out.value = std::move(e);
  } catch (const error &e) {
    out.status = load_status::invalid;
    out.detail = e.what();
  }
  return out;
}

std::vector<std::filesystem::path> winner_cache::remove(std::string_view function) const {
  std::vector<std::filesystem::path> removed;
  for (const auto &p : list(function)) {
    std::error_code ec;
    auto log = p;
    log.replace_extension(".log");
    std::filesystem::remove(log, ec);
    if (ec) {
      throw error("cannot remove the tuning log " + log.string() + ": " + ec.message());
    }
    if (std::filesystem::remove(p, ec)) {
      removed.push_back(p);
    } else if (ec) {
      throw error("cannot remove the cache entry " + p.string() + ": " + ec.message());
    }
  }
  return removed;
}

void write_file_atomically(const std::filesystem::path &path, std::string_view text) {
  static std::atomic<unsigned> counter{0};
  std::error_code ec;
  // A bare file name ("t.json") lives in the working directory.
  const std::filesystem::path dir_path =
      path.parent_path().empty() ? std::filesystem::path(".") : path.parent_path();
  std::filesystem::create_directories(dir_path, ec);
  if (ec) {
    throw error("cannot create directory " + dir_path.string() + ": " + ec.message());
  }
  const auto tmp =
      dir_path / ("." + path.filename().string() + ".tmp." + std::to_string(::getpid()) + "." +
                  std::to_string(counter.fetch_add(1)));
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    throw error("cannot write " + tmp.string() + ": " + std::strerror(errno));
  }
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      const std::string why = std::strerror(errno);
      ::close(fd);
      std::filesystem::remove(tmp, ec);
      throw error("cannot write " + tmp.string() + ": " + why);
    }
    done += static_cast<std::size_t>(n);
  }
  const bool synced = ::fsync(fd) == 0;
  const int sync_errno = errno;
  if (::close(fd) != 0 || !synced) {
    const std::string why = std::strerror(synced ? errno : sync_errno);
    std::filesystem::remove(tmp, ec);
    throw error("cannot flush " + tmp.string() + ": " + why);
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    const std::string why = ec.message();
    std::filesystem::remove(tmp, ec);
    throw error("cannot rename " + tmp.string() + " to " + path.string() + ": " + why);
  }
  // Make the rename itself durable (best effort: some file systems refuse fsync on directories).
  const int dir = ::open(dir_path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    static_cast<void>(::fsync(dir));
    ::close(dir);
  }
}

} // namespace tunekit
