#pragma once
/// \file device.hpp
/// Device identity for the hardware digest and artifacts, and the CUDA versions recorded with
/// every winner. Nothing here runs at load time: CUDA is initialised by the first call.
///
/// \code
/// tunekit::tuner_options o;
/// o.measurer = std::make_shared<tunekit::cuda::event_measurer>();
/// o.hardware = tunekit::cuda::device_hardware(0);
/// o.dependencies = tunekit::cuda::dependencies();
/// \endcode

#include <tunekit/hardware.hpp>

namespace tunekit::cuda {

/// True when the CUDA runtime sees at least one usable device. Never throws; a machine without a
/// driver or GPU answers false.
[[nodiscard]] bool device_available() noexcept;

/// Number of visible devices (0 when none is usable). Never throws.
[[nodiscard]] int device_count() noexcept;

/// The identity of `device`: kind "cuda", the product name ("NVIDIA H200"), the compute capability
/// as "sm_XY", its SM count as units and the number of visible devices as count. Throws
/// `tunekit::error` naming the device when it does not exist.
[[nodiscard]] hardware_info device_hardware(int device);

/// `device_hardware` of the calling thread's current device.
[[nodiscard]] hardware_info device_hardware();

/// The CUDA runtime tunekit was linked with and the installed driver, as "major.minor":
/// `{"cuda_driver": "13.0", "cuda_runtime": "13.0"}`; the driver reads "none" where no driver is
/// installed. Pass it as `tuner_options::dependencies`.
[[nodiscard]] tunekit::dependencies dependencies();

} // namespace tunekit::cuda
