#include <tunekit/key.hpp>

namespace tunekit {

key::key(std::initializer_list<value> values) {
  for (const auto &v : values) {
    push_back(v);
  }
}

key::key(const std::vector<value> &values) {
  for (const auto &v : values) {
    push_back(v);
  }
}

void key::push_back(value v) {
  if (m_size < inline_capacity) {
    m_inline[m_size] = std::move(v);
  } else {
    m_overflow.push_back(std::move(v));
  }
  ++m_size;
}

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

std::size_t key::hash() const noexcept {
  std::size_t h = m_size;
  for (std::size_t i = 0; i < m_size; ++i) {
    h ^= (*this)[i].hash() + 0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2);
  }
  return h;
}

bool operator==(const key &a, const key &b) noexcept {
  if (a.m_size != b.m_size) {
    return false;
  }
  for (std::size_t i = 0; i < a.m_size; ++i) {
    if (!(a[i] == b[i])) {
      return false;
    }
  }
  return true;
}

} // namespace tunekit
