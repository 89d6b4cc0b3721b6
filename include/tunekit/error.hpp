#pragma once
/// \file error.hpp
/// Errors thrown by tunekit. Misuse, bad input and I/O raise `tunekit::error`; a candidate that
/// fails during tuning is not an exception to the caller (it is recorded and skipped) unless it
/// leaves the device unusable, which raises `tunekit::fatal_candidate_error`. A search in which
/// nothing is valid raises `tunekit::no_valid_config_error`.

#include <stdexcept>
#include <string>

namespace tunekit {

/// Base class of every exception tunekit throws.
class error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// Thrown by a measurer or candidate when the failure poisons the process or device (for CUDA:
/// illegal address, misaligned address, launch failure). Tuning stops at once; the tuner rethrows
/// it with the tuner, key and candidate named.
class fatal_candidate_error : public error {
public:
  using error::error;
};

/// Thrown by a search in which no candidate ran and passed its check on every rank. The message
/// names the tuner and key and lists each measured candidate with its status and reason.
class no_valid_config_error : public error {
public:
  using error::error;
};

} // namespace tunekit
