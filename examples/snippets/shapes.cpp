// The C++ of docs/shapes.md, compiled as shown. Each block of the page stands below verbatim,
// between `// page:` and `// page end`, after the declarations the page leaves to the reader.
// scripts/check-doc-snippets.py fails when the page and this file drift apart. The page's layout
// is kept, so clang-format is off.
// clang-format off

#include <tunekit/tunekit.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

// What the page leaves to the reader.
void launch_mm(const float* a, const float* b, float* c, std::int64_t m, const tunekit::config& config);
void launch_scale(const float* x, float* y, float alpha, std::int64_t n, const tunekit::config& config);
const tunekit::config_space space = tunekit::config_space::product({{"BLOCK", {128, 256}}});
inline tunekit::key key_fn(const float*, const float*, float*, std::int64_t m) { return tunekit::key{m}; }
std::vector<tunekit::candidate_record> read_records(const tunekit::key& k);

void buckets() {
// page: docs/shapes.md block 1
tunekit::tuner_options o;
o.shapes.buckets = {tunekit::key_bucket::pow2(0)};       // the key's first value: M
auto mm = tunekit::autotune("mm", space, key_fn, tunekit::keep_all{}, launch_mm, o);
// page end
  static_cast<void>(mm);
}

void prior() {
// page: docs/shapes.md block 2
class triton_files final : public tunekit::prior_measurements {
public:
  std::string name() const override { return "Triton cache_results"; }
  std::vector<tunekit::candidate_record> find(const tunekit::key &k) const override {
    return read_records(k); // what the files hold for k
  }
};
tunekit::tuner_options o;
o.prior = std::make_shared<triton_files>();
// page end
  static_cast<void>(o);
}

void campaign(const float* x, float* y, tunekit::communicator& world) {
  auto scale = tunekit::autotune(
      "scale", space, [](const float*, float*, float, std::int64_t n) { return tunekit::key{n}; },
      tunekit::keep_all{}, launch_scale);
// page: docs/shapes.md block 3
std::vector<std::tuple<const float *, float *, float, std::int64_t>> calls;
for (std::int64_t n = 1024; n <= (1 << 24); n *= 2) {
  calls.emplace_back(x, y, 2.0f, n);
}
const tunekit::campaign_result r =
    tunekit::campaign(scale, calls,
                      {.comm = &world,
                       .artifacts = {.dir = "artifacts", .name = "scale_f32"},
                       .table = {.path = "tables/scale.json"}});
// page end
  static_cast<void>(r);
}
