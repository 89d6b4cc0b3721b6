#include <tunekit/key.hpp>

namespace tunekit {

std::vector<value> key::values() const {
  std::vector<value> out;
  out.reserve(m_size);
  for (std::size_t i = 0; i < m_size; ++i) {
    out.push_back((*this)[i]);
  }
  return out;
}

std::string key::to_string() const {
  std::string out = "(";
  for (std::size_t i = 0; i < m_size; ++i) {
    if (i != 0) {
      out += ", ";
    }
    out += (*this)[i].to_string();
  }
  return out + ")";
}

} // namespace tunekit
