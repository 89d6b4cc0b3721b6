#include "agreement.hpp"

#include "sha256.hpp"

#include <string>

namespace tunekit::detail {

namespace {

// 96 bits of the digest in two doubles that hold them exactly (for MIN/MAX comparisons).
void digest_words(const std::string &text, double out[2]) {
  const std::string hex = sha256_hex(text);
  out[0] = static_cast<double>(std::stoull(hex.substr(0, 12), nullptr, 16));
  out[1] = static_cast<double>(std::stoull(hex.substr(12, 12), nullptr, 16));
}

} // namespace

vote agree(communicator &comm, const std::string &what, const char *step, const std::string &text,
           std::optional<std::size_t> proposal) {
  if (comm.size() <= 1) {
    return {};
  }
  double lo[3];
  digest_words(text, lo);
  lo[2] = proposal ? static_cast<double>(*proposal) : -1.0;
  double hi[3] = {lo[0], lo[1], lo[2]};
  collective(what, step, [&] {
    comm.all_reduce_min(lo);
    comm.all_reduce_max(hi);
  });
  vote v;
  v.same_text = lo[0] == hi[0] && lo[1] == hi[1];
  v.same_proposal = v.same_text && lo[2] == hi[2];
  return v;
}

void reduce_worst(communicator &comm, const std::string &what, std::span<double> times) {
  if (comm.size() <= 1) {
    return;
  }
  collective(what, "reduction of the candidate timings", [&] { comm.all_reduce_max(times); });
}

} // namespace tunekit::detail
