#include <tunekit/cuda/device.hpp>
#include <tunekit/cuda/options.hpp>

#include <memory>
#include <utility>

namespace tunekit::cuda {

tunekit::tuner_options make_tuner_options(event_measurer_options measurer_options, int device) {
  tunekit::tuner_options o;
  o.measurer = std::make_shared<event_measurer>(std::move(measurer_options));
  o.hardware = device < 0 ? device_hardware() : device_hardware(device);
  o.dependencies = dependencies();
  return o;
}

} // namespace tunekit::cuda
