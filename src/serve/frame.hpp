#pragma once
// The wire format of one worker step (private to tunekit::serve): a frame of fixed size that every
// rank receives first, holding the header and, when they fit, the request's path and body; a
// larger request follows in a second broadcast of its bytes.

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace tunekit::serve::detail {

/// Bytes of the broadcast that starts each step (a request, a heartbeat, the stop).
inline constexpr std::size_t frame_bytes = 1024;

enum class step_kind : std::uint64_t { request = 1, heartbeat = 2, stop = 3 };

inline constexpr std::uint64_t header_magic = 0x74756e656b697431; // "tunekit1"

struct header {
  std::uint64_t magic = header_magic;
  step_kind kind = step_kind::heartbeat;
  std::uint64_t sequence = 0; // for a stop: the stop_reason
  std::uint64_t path_bytes = 0;
  std::uint64_t body_bytes = 0;
};

/// Payload bytes (path then body) that travel inside the frame.
inline constexpr std::size_t inline_capacity = frame_bytes - sizeof(header);

struct frame {
  header h;
  std::array<char, inline_capacity> inline_payload{};
};
static_assert(sizeof(frame) == frame_bytes);

/// The bytes a broadcast sends or fills.
inline std::span<std::byte> bytes_of(std::string &s) {
  return {reinterpret_cast<std::byte *>(s.data()), s.size()};
}

template <class T> std::span<std::byte> bytes_of(T &value) {
  return {reinterpret_cast<std::byte *>(&value), sizeof(T)};
}

} // namespace tunekit::serve::detail
