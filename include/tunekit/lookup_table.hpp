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
/// strings quoted, doubles keep a decimal point). With `table_key_format::inductor` both are
/// written as PyTorch Inductor writes them (see `table_key_format`), so that one table serves
/// Inductor and tunekit:
///
/// \code{.json}
/// {
///   "((torch.float16, [64, 128], [128, 1]), (torch.float16, [128, 256], [256, 1]))+mm": [
///     {"template_id": "triton::mm", "BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "num_warps": 4,
///      "num_stages": 3, "GROUP_M": 8, "hint_override": null}
///   ]
/// }
/// \endcode
///
/// A member whose value is JSON `null` (Inductor writes `"hint_override": null`) is "no value":
/// it is not a field of the choice, and a written table leaves it out.

#include <tunekit/config.hpp>
#include <tunekit/key.hpp>

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tunekit {

struct cache_entry;

/// How the input key and the additional params of a table key are written.
enum class table_key_format {
  /// tunekit's canonical text: the input key is `key::to_string()` (`(4096, "float32")`), param
  /// values are in canonical text (`mode="fast"`, `flag=true`, `ratio=1.0`).
  tunekit,
  /// PyTorch Inductor's text. A key that is one string value is the input key as it stands (its
  /// text, unquoted: what `tunekit.inductor_input_key(a, b)` builds,
  /// `((torch.float16, [512, 512], [512, 1]), (torch.float16, [512, 512], [512, 1]))`); any other
  /// key keeps tunekit's text. Param values are written as Python's `str()` writes them
  /// (`alpha=1`, `flag=True`, `ratio=1.0`, `mode=fast`).
  inductor,
};
/// "tunekit" or "inductor".
[[nodiscard]] std::string_view to_string(table_key_format f) noexcept;
/// The format a name gives ("tunekit", "inductor"); nullopt for anything else.
[[nodiscard]] std::optional<table_key_format>
parse_table_key_format(std::string_view name) noexcept;

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
  /// is not an object, has no string `template_id`, a `template_hash` that is neither a string nor
  /// null, or holds a value that is not an int, double, bool, string or null. A null member is no
  /// value: it is left out of the choice (a null `template_hash` is no hash).
  [[nodiscard]] static lookup_table from_json(std::string_view text);
  /// Reads a table file; throws `tunekit::error` naming the file.
  [[nodiscard]] static lookup_table load(const std::filesystem::path &path);

  /// A table of winner-cache entries (what `tunekit table export` writes): per entry, the
  /// device-specific key `<device>+<input key>+[params+]<op>` holding its `top_k` fastest valid
  /// candidates, fastest first (equal times keep the candidates' order). `op` empty: each entry's
  /// function name. The key's params are `params` (a tuner's `table.params`) plus the values the
  /// entry's call pinned, and the choices leave the pinned fields out, as the tuner looks them up.
  /// `template_hashes` (template_id -> source hash) is recorded with the choices of those
  /// templates (a hash of a template that no choice has is not used: `templates()` tells which
  /// there are). `key_format` writes the input keys and params (see `table_key_format`). Throws
  /// `tunekit::error` when `top_k` is 0, two entries give one table key, or a choice has a field
  /// named `template_id` or `template_hash` (see `add`).
  [[nodiscard]] static lookup_table
  from_entries(const std::vector<cache_entry> &entries, std::string_view op, std::size_t top_k,
               const config &params = {},
               const std::map<std::string, std::string> &template_hashes = {},
               table_key_format key_format = table_key_format::tunekit);

  /// The table as JSON text (keys sorted; values keep their JSON types).
  [[nodiscard]] std::string to_json() const;

  /// Appends an entry under `table_key`. Throws `tunekit::error` naming the key when the choice
  /// has a field named `template_id` or `template_hash`: in a table those members are the
  /// entry's template and its source hash, so such a table could not be read back as written.
  /// A config names its template with `config::set_template_id`.
  void add(const std::string &table_key, table_entry e);

  /// The entries of `table_key`, or nullptr.
  [[nodiscard]] const std::vector<table_entry> *find(std::string_view table_key) const noexcept;

  /// The template ids of the entries, sorted, each once.
  [[nodiscard]] std::vector<std::string> templates() const;

  [[nodiscard]] std::size_t size() const noexcept { return m_entries.size(); }
  [[nodiscard]] bool empty() const noexcept { return m_entries.empty(); }
  [[nodiscard]] const std::map<std::string, std::vector<table_entry>, std::less<>> &
  entries() const noexcept {
    return m_entries;
  }

private:
  std::map<std::string, std::vector<table_entry>, std::less<>> m_entries;
};

/// `k1=v1&k2=v2`, sorted by name, values in canonical text (`table_key_format::tunekit`) or as
/// Python's `str()` writes them (`inductor`); empty for no params.
[[nodiscard]] std::string table_params(const config &params,
                                       table_key_format f = table_key_format::tunekit);

/// The input key part of a table key: `key::to_string()`, or with `inductor` the text of a key
/// that is one string value.
[[nodiscard]] std::string table_input_key(const key &input,
                                          table_key_format f = table_key_format::tunekit);

/// `[device+]input_key+[params+]op`: the parts that are empty (device, params) are left out.
/// `params` is text `table_params` wrote (with the same format).
[[nodiscard]] std::string table_key(std::string_view device, const key &input,
                                    std::string_view params, std::string_view op,
                                    table_key_format f = table_key_format::tunekit);

} // namespace tunekit
