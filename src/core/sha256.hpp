#pragma once
// SHA-256 through OpenSSL's libcrypto (private to the core).

#include <string>
#include <string_view>

namespace tunekit::detail {

/// Lower-case hex SHA-256 of `data`.
[[nodiscard]] std::string sha256_hex(std::string_view data);

} // namespace tunekit::detail
