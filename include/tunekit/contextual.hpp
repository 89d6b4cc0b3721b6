#pragma once
/// \file contextual.hpp
/// Contextual autotuning: tune kernels inside the real surrounding work. A `tunable_kernel` is a
/// named launcher with its own config space and key. Outside a contextual run it resolves its
/// config like any tuner (memory, winner cache, search). Inside one, it takes the config the
/// contextual tuner hands it, and its launch is timed in place, next to whatever else the outer
/// function does (communication, other kernels sharing the device).
///
/// \code
/// auto gemm = tunekit::make_tunable_kernel("gemm", space, gemm_key, launch_gemm, opts);
/// auto step = tunekit::contextual_autotune([&](const Batch& b) {
///   start_all_reduce(b);                // runs concurrently with the kernel being tuned
///   gemm(b.a, b.b, b.c, b.m, b.n, b.k);
///   return finish_all_reduce(b);
/// });
/// auto out = step(batch);  // registers, measures every candidate in context, runs with winners
/// \endcode

#include <tunekit/communicator.hpp>
#include <tunekit/environment.hpp>
#include <tunekit/error.hpp>
#include <tunekit/launcher.hpp>
#include <tunekit/log.hpp>
#include <tunekit/process_context.hpp>
#include <tunekit/tuner.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>

namespace tunekit {

/// Options of a contextual tuner (the seed's `contextual_autotune(is_dist, n_repeat, n_warmup)`).
struct contextual_options {
  /// MAX-reduce each candidate's mean time across the ranks of `comm` before choosing.
  bool is_dist = false;
  /// Timed launches per candidate; the score is their mean.
  int n_repeat = 5;
  /// Launches per candidate before timing starts.
  int n_warmup = 3;
  /// Ranks for `is_dist`; null: a single process.
  communicator *comm = nullptr;
  /// Environment (`log_dir`: where the log goes), launcher (which rank this is, for the log file's
  /// name when there is no `comm` and for console lines) and log sink (INFO lines for verbose
  /// output and warnings); default: `process_context::from_env()`, read when the tuner is built.
  std::optional<process_context> process{};
  bool verbose = false;
};

namespace detail {

/// Holds the result of one call of a function, or nothing for void.
template <class R> class result_holder {
public:
  template <class F> void run(F &f) {
    m_value.reset();
    m_value.emplace(f());
  }
  R take() {
    if (!m_value.has_value()) {
      throw error("contextual tuner: no result was produced");
    }
    return std::move(m_value).value();
  }

private:
  std::optional<std::remove_cvref_t<R>> m_value;
};

/// Thrown through the outer function when a timed launch failed and no valid config is known yet
/// to rerun it with: the run is abandoned and the next one starts. Not a std::exception, so the
/// outer function's own handlers let it through.
struct abandon_run {};

template <> class result_holder<void> {
public:
  template <class F> void run(F &f) { f(); }
  void take() {}
};

} // namespace detail

/// The type-erased machinery of contextual tuning. At most one runs in a process at a time, and
/// only the tunable kernels called on the thread that runs it take part (`active()` is per thread).
class contextual_tuner final {
public:
  explicit contextual_tuner(contextual_options options = {});
  ~contextual_tuner();
  contextual_tuner(const contextual_tuner &) = delete;
  contextual_tuner &operator=(const contextual_tuner &) = delete;

  /// The contextual tuner whose runs are in progress on this thread, or null.
  [[nodiscard]] static contextual_tuner *active() noexcept;

  /// What a kernel launched inside a contextual run must do.
  struct plan {
    const config *cfg = nullptr; ///< the config to launch with
    std::size_t entry = 0;       ///< the (kernel, key) being measured
    bool timed = false;          ///< time this launch (it is a candidate's warmup or timed run)
  };
  /// Registers (kernel, key) on first sight and says which config this launch uses. Throws
  /// `detail::abandon_run` for a kernel whose candidates all failed.
  [[nodiscard]] plan plan_launch(tuner &t, const key &k);
  /// Times `run` (one launch with `p.cfg`) with the kernel's measurer and records it. Returns false
  /// when the launch failed (recorded as +infinity with its reason): the caller reruns with
  /// `fallback(p)`, the best valid config so far, so the outer function can go on, or abandons the
  /// run (`detail::abandon_run`) when there is none yet. Fatal failures propagate.
  bool measure_launch(const plan &p, detail::function_ref<void()> run);
  /// The best valid config measured so far for the (kernel, key) of `p`, or null.
  [[nodiscard]] const config *fallback(const plan &p) const noexcept;

  /// Starts a contextual call: throws `tunekit::error` when another contextual tuner is active.
  void begin();
  /// Called after each run of the outer function; true while candidates are left to measure.
  bool after_run();
  /// True when the registration run found kernels to tune.
  [[nodiscard]] bool has_work() const noexcept;
  /// Chooses each kernel's winner (MAX across ranks when distributed), hands the winners to the
  /// kernels' tuners and ends the contextual call.
  void finish();
  /// Ends the contextual call without choosing (on an exception).
  void abort() noexcept;

  /// The winners of the last finished call, one line per (kernel, key), for logs and tests.
  [[nodiscard]] std::vector<std::pair<std::string, config>> last_winners() const;

private:
  struct impl;
  std::unique_ptr<impl> m;
};

/// A kernel launcher with its own config space and key that takes part in contextual tuning.
template <class Fn, class KeyFn> class tunable_kernel final {
public:
  tunable_kernel(std::string name, config_space space, KeyFn key_fn, Fn fn,
                 tuner_options options = {})
      : m_tuned(autotune(std::move(name), std::move(space), std::move(key_fn), keep_all{},
                         std::move(fn), std::move(options))) {}

  template <class... Args> decltype(auto) operator()(Args &&...args) {
    if (contextual_tuner *ctx = contextual_tuner::active()) [[unlikely]] {
      return launch_in_context(*ctx, args...);
    }
    return m_tuned(args...);
  }

  [[nodiscard]] tunekit::tuner &tuner() const noexcept { return m_tuned.tuner(); }

private:
  template <class... Args> decltype(auto) launch_in_context(contextual_tuner &ctx, Args &...args) {
    const key k = m_tuned.key_of(std::as_const(args)...);
    const auto p = ctx.plan_launch(m_tuned.tuner(), k);
    if (!p.timed) {
      return m_tuned.invoke_with(*p.cfg, args...);
    }
    using result = decltype(m_tuned.invoke_with(*p.cfg, args...));
    detail::result_holder<result> out;
    auto once = [&]() -> decltype(auto) { return m_tuned.invoke_with(*p.cfg, args...); };
    auto run = [&] { out.run(once); };
    if (ctx.measure_launch(p, run)) {
      return out.take();
    }
    const config *fallback = ctx.fallback(p);
    if (fallback == nullptr) {
      throw detail::abandon_run{};
    }
    return m_tuned.invoke_with(*fallback, args...);
  }

  tuned_function<Fn, KeyFn, keep_all> m_tuned;
};

template <class KeyFn, class Fn>
[[nodiscard]] auto make_tunable_kernel(std::string name, config_space space, KeyFn key_fn, Fn fn,
                                       tuner_options options = {}) {
  return tunable_kernel<Fn, KeyFn>(std::move(name), std::move(space), std::move(key_fn),
                                   std::move(fn), std::move(options));
}

/// The callable `contextual_autotune` returns.
template <class Outer> class contextual_function final {
public:
  contextual_function(Outer outer, contextual_options options)
      : m_outer(std::move(outer)), m_ctx(std::make_shared<contextual_tuner>(std::move(options))) {}

  /// Runs the outer function once per measurement round until every tunable kernel it launches
  /// has measured every candidate (the first run registers them and is their first round), then
  /// once more with the winners, and returns that last run's result. When no kernel needs tuning,
  /// the outer function runs once.
  template <class... Args> auto operator()(Args &&...args) {
    constexpr bool fits = std::is_invocable_v<Outer &, Args &...>;
    static_assert(fits, "tunekit: contextual_autotune's outer function must be callable as "
                        "outer(Args&...), Args being the call's arguments; see docs/contextual.md");
    if constexpr (fits) {
      return run(args...);
    }
  }

  [[nodiscard]] contextual_tuner &tuner() const noexcept { return *m_ctx; }

private:
  template <class... Args> auto run(Args &...args) {
    using result = std::invoke_result_t<Outer &, Args &...>;
    auto once = [&]() -> decltype(auto) { return std::invoke(m_outer, args...); };
    detail::result_holder<result> out;
    m_ctx->begin();
    try {
      bool first = true;
      do {
        try {
          out.run(once);
        } catch (const detail::abandon_run &) {
          // A candidate failed with no valid config to rerun it with; the next run goes on.
        }
        if (first && !m_ctx->has_work()) {
          m_ctx->finish(); // every kernel was tuned before: this run was the real one
          return out.take();
        }
        first = false;
      } while (m_ctx->after_run());
      m_ctx->finish();
    } catch (...) {
      m_ctx->abort();
      throw;
    }
    out.run(once);
    return out.take();
  }

  Outer m_outer;
  std::shared_ptr<contextual_tuner> m_ctx;
};

/// Wraps an outer function so that the tunable kernels it launches are tuned in its context.
template <class Outer>
[[nodiscard]] auto contextual_autotune(Outer outer, contextual_options options = {}) {
  return contextual_function<Outer>(std::move(outer), std::move(options));
}

} // namespace tunekit
