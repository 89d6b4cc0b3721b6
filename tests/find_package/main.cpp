#include <tunekit/tunekit.hpp>

#include <cstdio>
#include <memory>
#include <string>

int main() {
  tunekit::environment env;
  env.cache_dir = "consumer-cache";
  auto add = tunekit::autotune(
      "consumer.add", tunekit::config_space{{{"step", 1}}, {{"step", 2}}},
      [](int n) { return tunekit::key{n}; }, tunekit::keep_all{},
      [](int n, const tunekit::config &c) { return n + static_cast<int>(c.get_int("step")); },
      tunekit::tuner_options{.version = CONSUMER_SOURCE_HASH,
                             .measurer = std::make_shared<tunekit::simulated_measurer>(
                                 [](const tunekit::config &c, const tunekit::key &) {
                                   return c.get_int("step") == 2 ? 1.0 : 2.0;
                                 }),
                             .env = env});
  const int r = add(40);
  std::printf("consumer: %d (version %s)\n", r,
              std::string(CONSUMER_SOURCE_HASH).substr(0, 12).c_str());
  return r == 42 ? 0 : 1;
}
