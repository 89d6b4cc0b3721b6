#include <tunekit/error.hpp>
#include <tunekit/launcher.hpp>

#include <charconv>
#include <cstdlib>
#include <optional>
#include <string>

namespace tunekit {

std::string_view to_string(launcher_kind k) noexcept {
  switch (k) {
  case launcher_kind::none:
    return "none";
  case launcher_kind::torchrun:
    return "torchrun";
  case launcher_kind::open_mpi:
    return "open_mpi";
  case launcher_kind::pmi:
    return "pmi";
  }
  return "unknown";
}

namespace {

// The integer value of `name`, or nullopt when it is unset or empty.
std::optional<int> read_int(const char *name) {
  const char *v = std::getenv(name); // NOLINT(concurrency-mt-unsafe): read once, at tuner build
  if (v == nullptr || *v == '\0') {
    return std::nullopt;
  }
  const std::string_view text(v);
  int out = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  if (ec != std::errc() || end != text.data() + text.size() || out < 0) {
    throw error("launcher variable " + std::string(name) + "='" + std::string(text) +
                "' is not a non-negative integer");
  }
  return out;
}

std::optional<launcher_info> read(launcher_kind kind, const char *rank, const char *local_rank,
                                  const char *size) {
  const auto r = read_int(rank);
  const auto n = read_int(size);
  if (!r || !n) {
    return std::nullopt;
  }
  const int local = read_int(local_rank).value_or(0);
  if (*n < 1 || *r >= *n || local >= *n) {
    throw error("launcher variables out of range: " + std::string(rank) + "=" + std::to_string(*r) +
                ", " + local_rank + "=" + std::to_string(local) + ", " + size + "=" +
                std::to_string(*n) + " (ranks must be below the size)");
  }
  return launcher_info{kind, *r, local, *n};
}

} // namespace

launcher_info launcher_info::from_env() {
  if (auto l = read(launcher_kind::torchrun, "RANK", "LOCAL_RANK", "WORLD_SIZE")) {
    return *l;
  }
  if (auto l = read(launcher_kind::open_mpi, "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK",
                    "OMPI_COMM_WORLD_SIZE")) {
    return *l;
  }
  if (auto l = read(launcher_kind::pmi, "PMI_RANK", "MPI_LOCALRANKID", "PMI_SIZE")) {
    return *l;
  }
  return {};
}

std::string launcher_info::to_string() const {
  if (kind == launcher_kind::none) {
    return "single process";
  }
  return "rank " + std::to_string(rank) + "/" + std::to_string(world_size) + " (local " +
         std::to_string(local_rank) + ", " + std::string(tunekit::to_string(kind)) + ")";
}

std::string launcher_info::log_file_name() const { return "rank-" + std::to_string(rank) + ".log"; }

} // namespace tunekit
