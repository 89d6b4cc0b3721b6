#pragma once
// JSON forms of tunekit's types (private to the core). Readers validate structure and types and
// throw tunekit::error naming the offending field.

#include <tunekit/config.hpp>
#include <tunekit/hardware.hpp>
#include <tunekit/key.hpp>
#include <tunekit/measure.hpp>
#include <tunekit/value.hpp>

#include <nlohmann/json.hpp>

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace tunekit::detail {

using json = nlohmann::ordered_json;

[[nodiscard]] json to_json(const value &v);
[[nodiscard]] json to_json(const config &c); ///< ordered object of the fields
[[nodiscard]] json to_json(const key &k);    ///< array of values
[[nodiscard]] json to_json(const hardware_info &hw);
[[nodiscard]] json to_json(const measure_policy &p);
[[nodiscard]] json to_json(const sample_stats &s);

/// `what` names the field in error messages ("winner.config").
[[nodiscard]] value value_from_json(const json &j, std::string_view what);
[[nodiscard]] config config_from_json(const json &j, std::string_view what);
[[nodiscard]] key key_from_json(const json &j, std::string_view what);
[[nodiscard]] hardware_info hardware_from_json(const json &j, std::string_view what);
[[nodiscard]] measure_policy policy_from_json(const json &j, std::string_view what);
[[nodiscard]] sample_stats stats_from_json(const json &j, std::string_view what);

/// The member `name` of object `j`, of the given JSON type; throws naming `what.name`.
const json &member(const json &j, std::string_view name, json::value_t type, std::string_view what);
[[nodiscard]] std::string string_member(const json &j, std::string_view name,
                                        std::string_view what);
[[nodiscard]] std::int64_t int_member(const json &j, std::string_view name, std::string_view what);

/// Whether `s` is well-formed UTF-8 (no overlong forms, surrogates or code points past U+10FFFF).
[[nodiscard]] bool is_utf8(std::string_view s) noexcept;
/// `s` itself when it is UTF-8; else throws tunekit::error saying that `what` (e.g. "config field
/// name") is not, with the bytes written as `\xNN`. For names, which JSON holds as object keys.
const std::string &utf8_name(const std::string &s, std::string_view what);
/// `s` with each byte that is not part of a UTF-8 sequence written as the text `\xNN` (lossy: for
/// free text such as a candidate's failure reason, never for identities).
[[nodiscard]] std::string utf8_text(std::string_view s);
/// `j.dump(indent)`, raising tunekit::error instead of nlohmann's exceptions.
[[nodiscard]] std::string dump(const json &j, int indent = -1);

/// How deep arrays and objects may nest in a document tunekit reads (docs/reliability.md).
inline constexpr std::size_t max_json_depth = 512;

/// Parses text in time linear in its size: nesting deeper than `max_json_depth` and a member
/// named twice in one object are refused. Throws tunekit::error with the reason.
[[nodiscard]] json parse_json(std::string_view text);
/// What `parse_json_members` hands each top-level member to: its name and value (both may be
/// moved from); false stops the parse.
using member_fn = std::function<bool(std::string &name, json &value)>;
/// `parse_json` of a document whose top level is an object, member by member: each member's value
/// is built, handed to `member` and freed, so that a large object is never held whole (a lookup
/// table of 10^6 keys). Returns the top level with its members left out (an empty object), or the
/// whole document when the top level is not an object. The top-level names are not checked for
/// repeats (the caller knows what it has read).
[[nodiscard]] json parse_json_members(std::string_view text, const member_fn &member);
/// `parse_json`, the error prefixed "<what> is not valid JSON: ".
[[nodiscard]] json parse(std::string_view text, std::string_view what);

} // namespace tunekit::detail
