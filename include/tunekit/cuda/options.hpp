#pragma once
/// \file options.hpp
/// Tuner options for a CUDA function in one call.

#include <tunekit/cuda/measurer.hpp>
#include <tunekit/tuner.hpp>

#include <memory>

namespace tunekit::cuda {

class kernel_program;

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

/// The same options for a runtime-compiled kernel (`rtc.hpp`), with the program wired in:
/// `version` is `program->digest()` (an edit of the kernel or a header retunes) and `preparer` is
/// `preparer(program)` (each batch compiles ahead while the GPU measures). Throws
/// `tunekit::error` for a null program.
///
/// \code
/// auto options = tunekit::cuda::make_tuner_options(program, {.stream = stream});
/// auto tuned = tunekit::autotune("scale", space, key_fn, tunekit::keep_all{}, scale, options);
/// \endcode
[[nodiscard]] tunekit::tuner_options
make_tuner_options(const std::shared_ptr<kernel_program> &program,
                   event_measurer_options measurer_options = {}, int device = -1);

} // namespace tunekit::cuda
