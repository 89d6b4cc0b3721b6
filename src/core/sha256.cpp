#include "sha256.hpp"

#include <tunekit/error.hpp>

#include <openssl/evp.h>

#include <array>

namespace tunekit::detail {

std::string sha256_hex(std::string_view data) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
  unsigned int len = 0;
  if (EVP_Digest(data.data(), data.size(), md.data(), &len, EVP_sha256(), nullptr) != 1) {
    throw error("SHA-256 computation failed in OpenSSL");
  }
  static constexpr char hex[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * len);
  for (unsigned int i = 0; i < len; ++i) {
    out += hex[md[i] >> 4];
    out += hex[md[i] & 0xF];
  }
  return out;
}

} // namespace tunekit::detail
