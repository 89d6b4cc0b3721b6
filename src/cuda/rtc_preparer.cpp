// The tuner's side of a kernel program: its `candidate_preparer` and the tuner options that wire
// one program in one place.

#include <tunekit/cuda/options.hpp>
#include <tunekit/cuda/rtc.hpp>
#include <tunekit/error.hpp>

#include <memory>
#include <utility>

namespace tunekit::cuda {

namespace {

class program_preparer final : public candidate_preparer {
public:
  explicit program_preparer(std::shared_ptr<kernel_program> program)
      : m_program(std::move(program)) {}
  void prepare(std::span<const config> configs) override { m_program->prepare(configs); }
  [[nodiscard]] std::optional<double> prepare_ms(const config &c) const override {
    const auto r = m_program->record(c);
    if (!r || r->status == compile_status::pending) {
      return std::nullopt;
    }
    return r->compile_ms;
  }

private:
  std::shared_ptr<kernel_program> m_program;
};

} // namespace

std::shared_ptr<candidate_preparer> preparer(std::shared_ptr<kernel_program> program) {
  if (!program) {
    throw error("tunekit::cuda::preparer: no kernel program");
  }
  return std::make_shared<program_preparer>(std::move(program));
}

tunekit::tuner_options make_tuner_options(const std::shared_ptr<kernel_program> &program,
                                          event_measurer_options measurer_options, int device) {
  if (!program) {
    throw error("tunekit::cuda::make_tuner_options: no kernel program");
  }
  tunekit::tuner_options o = make_tuner_options(std::move(measurer_options), device);
  o.version = program->digest();
  o.preparer = preparer(program);
  return o;
}

} // namespace tunekit::cuda
