#include <tunekit/error.hpp>
#include <tunekit/shapes.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

namespace tunekit {

std::int64_t key_bucket::apply(std::int64_t v) const noexcept {
  if (v <= 1) {
    return v;
  }
  switch (kind) {
  case rule::pow2: {
    std::int64_t p = 1;
    while (p < v && p <= std::numeric_limits<std::int64_t>::max() / 2) {
      p *= 2;
    }
    return p < v ? v : p; // above 2^62: left as it is
  }
  case rule::edges: {
    const auto it = std::lower_bound(edges.begin(), edges.end(), v);
    return it != edges.end() ? *it : edges.empty() ? v : edges.back();
  }
  case rule::multiple: {
    if (multiple <= 1) {
      return v;
    }
    const std::int64_t r = v % multiple;
    if (r == 0) {
      return v;
    }
    return v > std::numeric_limits<std::int64_t>::max() - (multiple - r) ? v : v + (multiple - r);
  }
  }
  return v;
}

std::string key_bucket::to_string() const {
  std::string out = "[";
  out += std::to_string(position);
  out += "] ";
  switch (kind) {
  case rule::pow2:
    return out + "pow2";
  case rule::edges: {
    out += "edges(";
    for (std::size_t i = 0; i < edges.size(); ++i) {
      if (i > 0) {
        out += ',';
      }
      out += std::to_string(edges[i]);
    }
    return out + ")";
  }
  case rule::multiple:
    return out + "multiple(" + std::to_string(multiple) + ")";
  }
  return out;
}

void check_buckets(std::string_view tuner, std::span<const key_bucket> buckets) {
  const std::string who = "tuner '" + std::string(tuner) + "': key bucket ";
  for (std::size_t i = 0; i < buckets.size(); ++i) {
    const key_bucket &b = buckets[i];
    for (std::size_t j = 0; j < i; ++j) {
      if (buckets[j].position == b.position) {
        throw error(who + b.to_string() + ": key value " + std::to_string(b.position) +
                    " already has a bucket (" + buckets[j].to_string() + ")");
      }
    }
    if (b.kind == key_bucket::rule::edges) {
      if (b.edges.empty()) {
        throw error(who + b.to_string() + ": edges needs at least one edge");
      }
      if (std::adjacent_find(b.edges.begin(), b.edges.end(),
                             [](auto x, auto y) { return x >= y; }) != b.edges.end()) {
        throw error(who + b.to_string() + ": the edges must be strictly ascending");
      }
    }
    if (b.kind == key_bucket::rule::multiple && b.multiple < 1) {
      throw error(who + b.to_string() + ": the multiple must be at least 1");
    }
  }
}

key bucket_key(const key &k, std::span<const key_bucket> buckets) {
  std::vector<value> values = k.values();
  for (const key_bucket &b : buckets) {
    if (b.position >= values.size()) {
      throw error("key bucket " + b.to_string() + ": the key " + k.to_string() + " has only " +
                  std::to_string(values.size()) + " values");
    }
    const value &v = values[b.position];
    if (!v.is_int()) {
      throw error("key bucket " + b.to_string() + ": value " + std::to_string(b.position) +
                  " of the key " + k.to_string() + " is " + v.to_string() +
                  ", not an int (only ints are bucketed)");
    }
    values[b.position] = value(b.apply(v.as_int()));
  }
  return key(values);
}

std::string describe_buckets(std::span<const key_bucket> buckets) {
  std::vector<const key_bucket *> sorted;
  for (const auto &b : buckets) {
    sorted.push_back(&b);
  }
  std::sort(sorted.begin(), sorted.end(),
            [](const key_bucket *a, const key_bucket *b) { return a->position < b->position; });
  std::string out;
  for (const key_bucket *b : sorted) {
    if (!out.empty()) {
      out += ", ";
    }
    out += b->to_string();
  }
  return out;
}

namespace {

bool numeric(const value &v) { return v.is_int() || v.is_double(); }
double number(const value &v) {
  return v.is_int() ? static_cast<double>(v.as_int()) : v.as_double();
}

// Position by position: numbers by value, anything else by its canonical text.
bool smaller(const key &a, const key &b) {
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (numeric(a[i]) && numeric(b[i])) {
      if (number(a[i]) != number(b[i])) {
        return number(a[i]) < number(b[i]);
      }
    } else if (!(a[i] == b[i])) {
      return a[i].to_string() < b[i].to_string();
    }
  }
  return false;
}

} // namespace

std::optional<double> key_distance(const key &a, const key &b, std::span<const std::size_t> over) {
  if (a.size() != b.size()) {
    return std::nullopt;
  }
  double d = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const bool counted = over.empty() || std::find(over.begin(), over.end(), i) != over.end();
    if (counted && numeric(a[i]) && numeric(b[i])) {
      d += std::abs(number(a[i]) - number(b[i]));
    } else if (!(a[i] == b[i])) {
      return std::nullopt;
    }
  }
  return d;
}

std::optional<std::size_t> nearest_key(const key &k, std::span<const key> known,
                                       std::span<const std::size_t> over) {
  std::optional<std::size_t> best;
  double best_d = 0;
  for (std::size_t i = 0; i < known.size(); ++i) {
    const auto d = key_distance(k, known[i], over);
    if (!d || known[i] == k) {
      continue;
    }
    if (!best || *d < best_d || (*d == best_d && smaller(known[i], known[*best]))) {
      best = i;
      best_d = *d;
    }
  }
  return best;
}

} // namespace tunekit
