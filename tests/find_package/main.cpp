// A consumer of tunekit (found with find_package or added with add_subdirectory): tunes one host
// function, and touches each component it links, so that linking them is checked too.

#include <tunekit/tunekit.hpp>
#if defined(CONSUMER_WITH_CUDA)
#include <tunekit/cuda/cuda.hpp>
#endif
#if defined(CONSUMER_WITH_MPI)
#include <tunekit/mpi/communicator.hpp>
#endif
#if defined(CONSUMER_WITH_NCCL)
#include <tunekit/nccl/error.hpp>
#endif
#if defined(CONSUMER_WITH_SERVE)
#include <tunekit/serve.hpp>
#endif

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
                             .process = tunekit::process_context{.env = env}});
  const int r = add(40);
  std::printf("consumer: %d (tunekit %s, version %s)\n", r, TUNEKIT_VERSION_STRING,
              std::string(CONSUMER_SOURCE_HASH).substr(0, 12).c_str());
#if defined(CONSUMER_WITH_CUDA)
  // No GPU needed: the classification of a CUDA error code.
  std::printf(
      "consumer: tunekit::cuda classifies an illegal address as %s\n",
      std::string(tunekit::cuda::to_string(tunekit::cuda::classify(cudaErrorIllegalAddress)))
          .c_str());
#endif
#if defined(CONSUMER_WITH_MPI)
  // Linked, not run (running needs mpiexec).
  void (*const by_default)() = &tunekit::mpi::use_world_by_default;
  std::printf("consumer: tunekit::mpi linked (%s)\n", by_default != nullptr ? "yes" : "no");
#endif
#if defined(CONSUMER_WITH_NCCL)
  // No GPU needed: NCCL's own text for a result code.
  std::printf("consumer: tunekit::nccl describes %s\n",
              tunekit::nccl::describe(ncclInvalidArgument).c_str());
#endif
#if defined(CONSUMER_WITH_SERVE)
  // Linked, not run (serving needs a communicator on every rank).
  tunekit::serve::summary (tunekit::serve::worker::*const serve)() = &tunekit::serve::worker::serve;
  std::printf("consumer: tunekit::serve linked (%s; stops on %s)\n",
              serve != nullptr ? "yes" : "no",
              tunekit::serve::to_string(tunekit::serve::stop_reason::signal));
#endif
  return r == 42 ? 0 : 1;
}
