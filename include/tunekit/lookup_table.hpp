#pragma once
/// \file lookup_table.hpp
/// Lookup tables: pre-configured choices per (device, input, params, op), so that a call can skip
/// measurement (one choice) or measure only a few (several choices).
///
/// A table is a JSON object. Each key is `[device_name+]input_key+[additional_params+]op_name`;
/// each value is a list of entries, each with a `template_id`, the template's parameters, and an
/// optional `template_hash`:
///
/// \code{.json}
/// {
///   "Test CPU 9000+(4096, \"float32\")+alpha=1&beta=0+gemm": [
///     {"template_id": "tiled", "BLOCK": 256, "template_hash": "0717af58..."},
///     {"template_id": "tiled", "BLOCK": 512}
///   ],
///   "(4096, \"float32\")+gemm": [{"template_id": "tiled", "BLOCK": 128}]
/// }
/// \endcode
///
/// The input key is the canonical text of the call's key (`key::to_string()`); the additional
/// params are `name=value` pairs sorted by name and joined by `&` (values in canonical text:
/// strings quoted, doubles keep a decimal point).

#include <tunekit/config.hpp>
#include <tunekit/key.hpp>

#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace tunekit {

struct cache_entry;

/// One choice of a table: the config (with its template id) and the template's source hash when
/// the entry was recorded (empty: none).
struct table_entry {
  tunekit::config choice{};
  std::string template_hash{};
  friend bool operator==(const table_entry &, const table_entry &) = default;
};

class lookup_table final {
public:
  static constexpr std::string_view template_id_member = "template_id";
  static constexpr std::string_view template_hash_member = "template_hash";

  lookup_table() = default;

  /// Parses and validates a table. Throws `tunekit::error` naming the table key of an entry that
  /// is not an object, has no string `template_id`, or holds a value that is not an int, double,
  /// bool or string.
  [[nodiscard]] static lookup_table from_json(std::string_view text);
  /// Reads a table file; throws `tunekit::error` naming the file.
  [[nodiscard]] static lookup_table load(const std::filesystem::path &path);

  /// A table of winner-cache entries (what `tunekit table export` writes): per entry, the
  /// device-specific key `<device>+<input key>+[params+]<op>` holding its `top_k` fastest valid
  /// candidates, fastest first (equal times keep the candidates' order). `op` empty: each entry's
  /// function name. The key's params are `params` (a tuner's `table.params`) plus the values the
  /// entry's call pinned, and the choices leave the pinned fields out, as the tuner looks them up.
  /// `template_hashes` (template_id -> source hash) is recorded with the choices of those
  /// templates. Throws `tunekit::error` when `top_k` is 0 or two entries give one table key.
  [[nodiscard]] static lookup_table
  from_entries(const std::vector<cache_entry> &entries, std::string_view op, std::size_t top_k,
               const config &params = {},
               const std::map<std::string, std::string> &template_hashes = {});

  /// The table as JSON text (keys sorted; values keep their JSON types).
  [[nodiscard]] std::string to_json() const;

  /// Appends an entry under `table_key`.
  void add(const std::string &table_key, table_entry e);

  /// The entries of `table_key`, or nullptr.
  [[nodiscard]] const std::vector<table_entry> *find(std::string_view table_key) const noexcept;

  [[nodiscard]] std::size_t size() const noexcept { return m_entries.size(); }
  [[nodiscard]] bool empty() const noexcept { return m_entries.empty(); }
  [[nodiscard]] const std::map<std::string, std::vector<table_entry>, std::less<>> &
  entries() const noexcept {
    return m_entries;
  }

private:
  std::map<std::string, std::vector<table_entry>, std::less<>> m_entries;
};

/// `k1=v1&k2=v2`, sorted by name, values in canonical text; empty for no params.
[[nodiscard]] std::string table_params(const config &params);

/// `[device+]input_key+[params+]op`: the parts that are empty (device, params) are left out.
[[nodiscard]] std::string table_key(std::string_view device, const key &input,
                                    std::string_view params, std::string_view op);

} // namespace tunekit
