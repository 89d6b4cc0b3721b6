#include "rtc_compiler.hpp"

#include <utility>

namespace tunekit::cuda::rtc_detail {

namespace {

class nvrtc_in_process final : public compiler {
public:
  explicit nvrtc_in_process(nvrtc_source source) : m_source(std::move(source)) {}
  [[nodiscard]] nvrtc_output compile(const nvrtc_job &job) override {
    return run_nvrtc(m_source, job);
  }

private:
  nvrtc_source m_source;
};

} // namespace

std::unique_ptr<compiler> make_in_process_compiler(nvrtc_source source) {
  return std::make_unique<nvrtc_in_process>(std::move(source));
}

} // namespace tunekit::cuda::rtc_detail
