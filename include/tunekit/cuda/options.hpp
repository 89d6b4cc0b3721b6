#pragma once
/// \file options.hpp
/// Tuner options for a CUDA function in one call.

#include <tunekit/cuda/measurer.hpp>
#include <tunekit/tuner.hpp>

namespace tunekit::cuda {

/// `tuner_options` whose measurer is an `event_measurer` with `measurer_options`, whose hardware is
/// `device_hardware(device)` and whose dependencies are `cuda::dependencies()`. `device` < 0 means
/// the current device. Touches CUDA (to read the device identity); throws `tunekit::error` when
/// the device does not exist.
///
/// \code
/// auto scale = tunekit::autotune("scale", space, key_fn, tunekit::keep_all{}, launch_scale,
///                                tunekit::cuda::make_tuner_options({.stream = stream}));
/// \endcode
[[nodiscard]] tunekit::tuner_options
make_tuner_options(event_measurer_options measurer_options = {}, int device = -1);

} // namespace tunekit::cuda
