#include "agreement.hpp"

#include "sha256.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <string>

namespace tunekit::detail {

namespace {

// 96 bits of the digest in two doubles that hold them exactly (for MIN/MAX comparisons).
void digest_words(const std::string &text, double out[2]) {
  const std::string hex = sha256_hex(text);
  out[0] = static_cast<double>(std::stoull(hex.substr(0, 12), nullptr, 16));
  out[1] = static_cast<double>(std::stoull(hex.substr(12, 12), nullptr, 16));
}

// The longest error text a failing rank sends the others.
constexpr std::size_t failure_bytes = 1024;

// Every rank learns the failing rank's error (`failing` is the lowest rank that failed).
[[noreturn]] void raise_failure(communicator &comm, const std::string &what, const char *step,
                                int failing, const std::optional<std::string> &failure) {
  std::array<std::byte, failure_bytes> buf{};
  if (comm.rank() == failing) {
    std::memcpy(buf.data(), failure->data(), std::min(failure->size(), failure_bytes - 1));
  }
  collective(what, step, [&] { comm.broadcast(buf, failing); });
  const auto *chars = reinterpret_cast<const char *>(buf.data());
  // The same text on every rank: the failing rank's error carries its own context.
  throw error(
      "rank " + std::to_string(failing) + " of " + std::to_string(comm.size()) +
      " failed, so every rank stops: " + std::string(chars, ::strnlen(chars, failure_bytes)));
}

} // namespace

vote agree(communicator &comm, const std::string &what, const char *step, const std::string &text,
           std::optional<std::size_t> proposal, const std::optional<std::string> &failure) {
  if (comm.size() <= 1) {
    if (failure) {
      throw error(*failure);
    }
    return {};
  }
  // [digest, digest, proposal, failing rank (the size when this rank did not fail)]
  double lo[4];
  digest_words(text, lo);
  lo[2] = proposal ? static_cast<double>(*proposal) : -1.0;
  lo[3] = static_cast<double>(failure ? comm.rank() : comm.size());
  double hi[4] = {lo[0], lo[1], lo[2], lo[3]};
  collective(what, step, [&] {
    comm.all_reduce_min(lo);
    comm.all_reduce_max(hi);
  });
  if (lo[3] < static_cast<double>(comm.size())) {
    raise_failure(comm, what, step, static_cast<int>(lo[3]), failure);
  }
  vote v;
  v.same_text = lo[0] == hi[0] && lo[1] == hi[1];
  v.same_proposal = v.same_text && lo[2] == hi[2];
  return v;
}

void confirm(communicator &comm, const std::string &what) {
  if (comm.size() <= 1) {
    return;
  }
  collective(what, "confirmation that every rank finished the search", [&] { comm.barrier(); });
}

void reduce_worst(communicator &comm, const std::string &what, std::span<double> times) {
  if (comm.size() <= 1) {
    return;
  }
  collective(what, "reduction of the candidate timings", [&] { comm.all_reduce_max(times); });
}

} // namespace tunekit::detail
