// Runtime-compiled kernels on a GPU (label gpu; skipped without a device): launches through the
// driver, results, limits checked before a launch, dynamic shared memory beyond 48 KiB, tuning
// and contextual tuning with compile failures among the candidates, binaries from the cache.

#include "../core/test_support.hpp"
#include "gpu_test.hpp"
#include "rtc_test_support.hpp"

#include <tunekit/cuda/cuda.hpp>
#include <tunekit/cuda/rtc.hpp>
#include <tunekit/tunekit.hpp>

#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <string>
#include <vector>

namespace {

namespace tc = tunekit::cuda;
using tunekit_test::log_capture;
using tunekit_test::temp_dir;

class rtc_gpu : public tc::test::gpu_test {
protected:
  tc::compile_options options() const {
    tc::compile_options o;
    o.cache = std::make_shared<const tc::kernel_cache>(m_dir.path(), m_log.sink());
    o.log = m_log.sink();
    o.threads = 4;
    return o;
  }
  std::vector<float> host(const float *device, std::size_t n) {
    std::vector<float> out(n);
    TUNEKIT_CUDA_CHECK(cudaStreamSynchronize(stream()));
    TUNEKIT_CUDA_CHECK(cudaMemcpy(out.data(), device, n * sizeof(float), cudaMemcpyDeviceToHost));
    return out;
  }
  void upload(float *device, const std::vector<float> &v) {
    TUNEKIT_CUDA_CHECK(
        cudaMemcpy(device, v.data(), v.size() * sizeof(float), cudaMemcpyHostToDevice));
  }

  temp_dir m_dir;
  log_capture m_log;
};

constexpr int block_size = 128;

// scale(x, y, alpha, n, stream, config): ELEMS per thread, 128 threads per block.
auto make_scale(std::shared_ptr<tc::kernel_program> p) {
  return tc::make_runtime_kernel<const float *, float *, float, int, cudaStream_t>(
      std::move(p), [](const tunekit::config &c) { return static_cast<int>(c.get_int("ELEMS")); },
      [](const int &elems, const float *, float *, float, int n, cudaStream_t) {
        const int per_block = block_size * elems;
        return tc::launch_dims{.grid = dim3(static_cast<unsigned>((n + per_block - 1) / per_block)),
                               .block = dim3(block_size)};
      });
}

} // namespace

TEST_F(rtc_gpu, a_runtime_kernel_computes_on_the_callers_stream) {
  auto program = std::make_shared<tc::kernel_program>(tc::test::scale_definition(), options());
  auto scale = make_scale(program);
  const int n = 100000;
  tc::test::device_buffer x(n);
  tc::test::device_buffer y(n);
  std::vector<float> in(n);
  for (int i = 0; i < n; ++i) {
    in[static_cast<std::size_t>(i)] = static_cast<float>(i % 97);
  }
  upload(x.get(), in);
  for (const int e : {1, 4, 16}) {
    const tunekit::config c{{"ELEMS", e}};
    TUNEKIT_CUDA_CHECK(cudaMemsetAsync(y.get(), 0, n * sizeof(float), stream()));
    scale(x.get(), y.get(), 2.5f, n, stream(), c);
    const auto out = host(y.get(), n);
    for (int i = 0; i < n; i += 997) {
      ASSERT_EQ(out[static_cast<std::size_t>(i)], 2.5f * in[static_cast<std::size_t>(i)])
          << "ELEMS=" << e << " i=" << i;
    }
    const auto r = scale.compile_info(c);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->status, tc::compile_status::compiled);
    EXPECT_EQ(r->target, program->target());
  }
  // A second program on the same cache compiles nothing and launches the cached binaries.
  auto again = std::make_shared<tc::kernel_program>(tc::test::scale_definition(), options());
  auto scale2 = make_scale(again);
  scale2(x.get(), y.get(), 3.0f, n, stream(), tunekit::config{{"ELEMS", 4}});
  EXPECT_EQ(host(y.get(), n)[96], 3.0f * 96.0f);
  EXPECT_EQ(again->summary().cache_hits, 1U);
  EXPECT_EQ(again->summary().compiled, 0U);
}

TEST_F(rtc_gpu, template_arguments_select_the_instantiation) {
  auto program = std::make_shared<tc::kernel_program>(tc::test::fill_definition(), options());
  auto fill = tc::make_runtime_kernel<float *, int, cudaStream_t>(
      program, [](const tunekit::config &c) { return static_cast<unsigned>(c.get_int("TILE")); },
      [](const unsigned &tile, float *, int n, cudaStream_t) {
        return tc::launch_dims{.grid = dim3((static_cast<unsigned>(n) + tile - 1) / tile),
                               .block = dim3(tile)};
      });
  tc::test::device_buffer out(1000);
  fill(out.get(), 1000, stream(), tunekit::config{{"TILE", 64}});
  EXPECT_EQ(host(out.get(), 1000)[999], 64.0f);
  fill(out.get(), 1000, stream(), tunekit::config{{"TILE", 256}});
  EXPECT_EQ(host(out.get(), 1000)[0], 256.0f);
}

TEST_F(rtc_gpu, a_block_the_function_cannot_run_fails_before_launching) {
  auto d = tc::test::scale_definition();
  const std::string plain = "__global__ void scale";
  d.source.text.replace(d.source.text.find(plain), plain.size(),
                        "__global__ void __launch_bounds__(64) scale");
  auto program = std::make_shared<tc::kernel_program>(d, options());
  auto scale = make_scale(program); // blocks of 128 threads
  tc::test::device_buffer x(1024);
  tc::test::device_buffer y(1024);
  try {
    scale(x.get(), y.get(), 1.0f, 1024, stream(), tunekit::config{{"ELEMS", 1}});
    FAIL() << "launched 128 threads of a function bounded to 64";
  } catch (const tunekit::fatal_candidate_error &e) {
    FAIL() << "must only fail the candidate: " << e.what();
  } catch (const tunekit::error &e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("a block of 128 threads cannot launch"), std::string::npos) << what;
    EXPECT_NE(what.find("at most 64"), std::string::npos) << what;
    EXPECT_NE(what.find("ELEMS=1"), std::string::npos) << what;
  }
  tc::check_launch("after a refused launch"); // nothing reached the device
}

TEST_F(rtc_gpu, dynamic_shared_memory_beyond_48_kib_is_opted_into_and_beyond_the_device_refused) {
  tc::kernel_definition d;
  d.source = tc::kernel_source{"smem.cu", R"(
extern "C" __global__ void smem(float *out, int words) {
  extern __shared__ float buf[];
  for (int i = threadIdx.x; i < words; i += blockDim.x) buf[i] = static_cast<float>(i);
  __syncthreads();
  if (threadIdx.x == 0) out[0] = buf[words - 1];
}
)"};
  d.entry = "smem";
  auto program = std::make_shared<tc::kernel_program>(d, options());
  auto smem = tc::make_runtime_kernel<float *, int, cudaStream_t>(
      program, [](const tunekit::config &) { return 0; },
      [](const int &, float *, int words, cudaStream_t) {
        return tc::launch_dims{.block = dim3(256),
                               .shared_bytes = static_cast<unsigned>(words) * 4U};
      });
  tc::test::device_buffer out(1);
  const tunekit::config c{{"V", 1}};
  smem(out.get(), 24 * 1024, stream(), c); // 96 KiB
  EXPECT_EQ(host(out.get(), 1)[0], static_cast<float>(24 * 1024 - 1));
  EXPECT_THROW(smem(out.get(), 1024 * 1024, stream(), c), tunekit::error); // 4 MiB
  tc::check_launch("after a refused launch");
}

TEST_F(rtc_gpu, tuning_skips_configs_that_do_not_compile_and_picks_a_valid_one) {
  auto program = std::make_shared<tc::kernel_program>(tc::test::scale_definition(), options());
  auto scale = make_scale(program);
  const auto space = tunekit::config_space::product({{"ELEMS", {1, 2, 4, 8, 32}}});
  const int n = 1 << 22;
  tc::test::device_buffer x(n);
  tc::test::device_buffer y(n);
  auto o = tc::make_tuner_options({.stream = stream()});
  o.process = tunekit::process_context{tunekit_test::test_env(m_dir.path()), {}, m_log.sink()};
  o.version = program->digest();
  auto tuned = tunekit::autotune(
      "rtc.scale", space,
      [](const float *, float *, float, int len, cudaStream_t) { return tunekit::key{len}; },
      tunekit::keep_all{}, scale, o);
  scale.prepare(space.configs());
  tuned(x.get(), y.get(), 2.0f, n, stream());
  const auto e = tuned.tuner().last_search();
  ASSERT_TRUE(e.has_value());
  ASSERT_EQ(e->candidates.size(), 5U);
  const auto &bad = e->candidates[4];
  EXPECT_EQ(bad.status, tunekit::candidate_status::failed);
  EXPECT_EQ(bad.reason.rfind("scale.cu(", 0), 0U) << bad.reason;
  EXPECT_NE(bad.reason.find("ELEMS is too large"), std::string::npos) << bad.reason;
  EXPECT_LT(e->winner.get_int("ELEMS"), 32);
  const auto s = program->summary();
  EXPECT_EQ(s.compiled, 4U);
  EXPECT_EQ(s.failed, 1U);
  // The resolved call launches the winner with nothing compiled or loaded again.
  const auto before = program->summary();
  tuned(x.get(), y.get(), 2.0f, n, stream());
  EXPECT_EQ(program->summary().compile_ms, before.compile_ms);
  TUNEKIT_CUDA_CHECK(cudaStreamSynchronize(stream()));
}

TEST_F(rtc_gpu, a_runtime_kernel_is_a_tunable_kernel_in_context) {
  auto program = std::make_shared<tc::kernel_program>(tc::test::scale_definition(), options());
  auto o = tc::make_tuner_options({.stream = stream()});
  o.process = tunekit::process_context{tunekit_test::test_env(m_dir.path()), {}, m_log.sink()};
  o.use_disk_cache = false;
  auto kernel = tunekit::make_tunable_kernel(
      "rtc.scale_in_context", tunekit::config_space::product({{"ELEMS", {1, 4, 32}}}),
      [](const float *, float *, float, int len, cudaStream_t) { return tunekit::key{len}; },
      make_scale(program), o);
  const int n = 1 << 20;
  tc::test::device_buffer x(n);
  tc::test::device_buffer y(n);
  tunekit::contextual_options co;
  co.process = tunekit::process_context{tunekit_test::test_env(m_dir.path()), {}, m_log.sink()};
  auto step = tunekit::contextual_autotune(
      [&] {
        kernel(x.get(), y.get(), 2.0f, n, stream());
        TUNEKIT_CUDA_CHECK(cudaStreamSynchronize(stream()));
      },
      co);
  step();
  const auto winners = step.tuner().last_winners();
  ASSERT_EQ(winners.size(), 1U);
  EXPECT_NE(winners[0].second.get_int("ELEMS"), 32); // ELEMS=32 does not compile
}
