#pragma once
/// \file tuner.hpp
/// Function-level autotuning. `autotune(name, space, key_fn, prune_fn, fn)` wraps a function
/// `fn(args..., const config&)` so that each call resolves the config for its key, from the first
/// source that answers: in-process winners, the winner cache on disk, a reviewed artifact, the
/// lookup table, the default function, else a search that measures the candidates `prune_fn` keeps
/// (see docs/function_tuner.md). The first tuning call returns the result of one more call of `fn`
/// with the winner.
///
/// The machinery lives in the non-template `tuner` (compiled once); `tuned_function` only forwards.

#include <tunekit/artifact.hpp>
#include <tunekit/communicator.hpp>
#include <tunekit/config_space.hpp>
#include <tunekit/detail/function_ref.hpp>
#include <tunekit/detail/winner.hpp>
#include <tunekit/environment.hpp>
#include <tunekit/hardware.hpp>
#include <tunekit/key.hpp>
#include <tunekit/launcher.hpp>
#include <tunekit/log.hpp>
#include <tunekit/lookup_table.hpp>
#include <tunekit/measure.hpp>
#include <tunekit/process_context.hpp>
#include <tunekit/tuner_options.hpp>
#include <tunekit/winner_cache.hpp>

#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tunekit {

namespace detail {
struct tuner_access;
} // namespace detail

/// The type-erased tuner: config space, winners in memory, winner cache, measurement.
/// Thread-safe: concurrent calls may resolve different keys; one search runs at a time.
class tuner final {
public:
  tuner(std::string name, config_space space, tuner_options options);
  ~tuner();
  tuner(const tuner &) = delete;
  tuner &operator=(const tuner &) = delete;

  [[nodiscard]] const std::string &name() const noexcept;
  [[nodiscard]] const config_space &space() const noexcept;
  [[nodiscard]] const tuner_options &options() const noexcept;
  [[nodiscard]] const environment &env() const noexcept;
  [[nodiscard]] function_identity identity() const;
  [[nodiscard]] const hardware_info &hardware() const noexcept;
  /// Where the winner cache entry of the stored key `k` lives (whether or not it exists); with key
  /// buckets, the entry of the bucket `k` falls in.
  [[nodiscard]] std::filesystem::path cache_path(const key &k) const;

  /// The in-process winner of `k`, or nullptr (the pointer stays valid until `forget`).
  [[nodiscard]] const config *find(const key &k) const noexcept;

  /// Full resolution of `k` (memory, cache, artifact, lookup table, default, search; see
  /// docs/function_tuner.md). `default_fn`, when given, answers after the artifact and the table.
  /// `prune` says whether a candidate is kept;
  /// `run` calls the tuned function once with a candidate; `check` validates the output of the last
  /// run (false: "wrong result"). `reset`, when given, puts back the arguments the function writes
  /// (see `tuned_function::with_reset`): before every run of a candidate (`candidate_info::reset`)
  /// and once more after a search, so that the winner's call sees the caller's data. Throws
  /// `tunekit::error` when nothing valid is left.
  const config &resolve(const key &k, const call_options &o,
                        detail::function_ref<bool(const config &)> prune,
                        detail::function_ref<void(const config &)> run,
                        detail::function_ref<bool(const config &)> check,
                        const detail::function_ref<config()> *default_fn = nullptr,
                        const detail::function_ref<void(const config &)> *reset = nullptr);

  /// The lookup table this tuner consults, or nullptr.
  [[nodiscard]] const tunekit::lookup_table *table() const noexcept;

  /// Source that answered the most recent resolution (memory hits on the hot path included).
  [[nodiscard]] source last_source() const noexcept;
  /// Searches run by this tuner so far.
  [[nodiscard]] std::size_t searches() const noexcept;
  /// The record of the most recent search, if any.
  [[nodiscard]] std::optional<cache_entry> last_search() const;
  /// Drops the in-process winners (not thread-safe against concurrent calls).
  void forget();
  /// Takes `c` (a config of the space, with the call's pinned values) as the in-process winner of
  /// the stored key `k` without measuring, as a shipped per-shape table says (docs/shapes.md):
  /// later calls of `k` are memory hits, and nearest-key serving compares `k`. Throws
  /// `tunekit::error` when `c` is not a config of the space.
  void seed(const key &k, const config &c);

  /// Deferred mode: a collective rendezvous (a barrier on `comm`, else the tuner's communicator,
  /// else `default_communicator()`) after which the next call of each key tunes. Call it on every
  /// rank. Throws `communicator_timeout` naming the step when the communicator's limit passes.
  void arm(communicator *comm = nullptr);
  /// Whether `arm` has been called (always true in eager mode).
  [[nodiscard]] bool armed() const noexcept;
  /// Keys called in deferred mode before `arm`, in first-call order.
  [[nodiscard]] std::vector<key> recorded_keys() const;

private:
  friend struct detail::tuner_access;

  // The plumbing of `tuned_function`, `tunable_kernel` and `contextual_tuner`, reached through
  // `detail::tuner_access`.
  [[nodiscard]] const detail::winner *find_winner(const key &k, bool hot) const noexcept;
  [[nodiscard]] config disabled_config(const call_options &o) const;
  [[noreturn]] void key_fn_failed(std::exception_ptr e, const call_options *o) const;
  [[nodiscard]] tunekit::measurer &measurer() const noexcept;
  const config &remember(const key &k, const config &c);

  // Bumped by every change of the in-process winners (see `detail::winner_memo`); kept here, not
  // in `impl`, so that the hot path reads it without another indirection.
  std::atomic<std::uint64_t> m_generation{0};
  struct impl;
  std::unique_ptr<impl> m;
};

namespace detail {

/// What the templates over a `tuner` (`tuned_function`, `tunable_kernel`) and the contextual tuner
/// need from it, kept out of its public interface (as nvbench's `state` befriends its runner).
struct tuner_access {
  /// The in-process winner of `k`, or nullptr. `hot` is the call path of `tuned_function`: a hit
  /// is recorded as the last source (memory), and when every call is verbose (`TUNEKIT_VERBOSE`)
  /// it returns nullptr so that `resolve` reports the hit.
  [[nodiscard]] static const winner *find_winner(const tuner &t, const key &k, bool hot) noexcept {
    return t.find_winner(k, hot);
  }
  /// The hot path: the winner `memo` remembers when it is still current for `k`, else a lookup
  /// (`find_winner(t, k, true)`) whose hit the memo then remembers. A memo hit reads two cache
  /// lines: the tuner's generation and the winner.
  [[nodiscard]] static const winner *find_hot(const tuner &t, const winner_memo &memo,
                                              const key &k) noexcept {
    if (const winner *w = memo.find(k, t.m_generation.load(std::memory_order_acquire))) [[likely]] {
      return w;
    }
    const winner *w = t.find_winner(k, true);
    if (w != nullptr) {
      memo.remember(w);
    }
    return w;
  }
  /// The config of an `autotune=false` call: the space's first config with the pinned values.
  [[nodiscard]] static config disabled_config(const tuner &t, const call_options &o) {
    return t.disabled_config(o);
  }
  /// Rethrows an exception of key_fn as `tunekit::error` naming the tuner. With the options of a
  /// tuning call (`o`), the ranks of the call's communicator are told first (see
  /// docs/function_tuner.md, "Failures on one rank").
  [[noreturn]] static void key_fn_failed(const tuner &t, std::exception_ptr e,
                                         const call_options *o = nullptr) {
    t.key_fn_failed(std::move(e), o);
  }
  /// The measurer the tuner times candidates with.
  [[nodiscard]] static tunekit::measurer &measurer(const tuner &t) noexcept { return t.measurer(); }
  /// Makes `c` the in-process winner of `k` (the contextual tuner hands its winners over this
  /// way). Returns the stored config, valid for the tuner's lifetime.
  static const config &remember(tuner &t, const key &k, const config &c) {
    return t.remember(k, c);
  }
};

} // namespace detail

/// A prune function that keeps every config.
struct keep_all {
  template <class... Args> bool operator()(const config & /*c*/, const Args &.../*args*/) const {
    return true;
  }
};

/// A correctness check that accepts every output.
struct no_check {
  template <class... Args> bool operator()(const Args &.../*args*/) const { return true; }
};

/// Marks a tuned function without a default function.
struct no_default {};

/// Marks a tuned function that writes none of its arguments (no reset hook).
struct no_reset {};

/// A tuned function that takes its config decoded into the caller's own type: `decode(const
/// config&) -> P` runs once per measured candidate and once per resolved winner, and `fn(args...,
/// const P&)` is called with it, so a resolved call reads no config field by name.
///
/// \code
/// struct sizes { int block, threads; };
/// auto tuned = tunekit::autotune("scale", space, key_fn, prune_fn,
///     tunekit::decoded{[](const tunekit::config& c) {
///                        return sizes{int(c.get_int("BLOCK")), int(c.get_int("threads"))}; },
///                      [](const float* x, float* y, std::int64_t n, const sizes& s) {
///                        launch_scale(x, y, n, s.block, s.threads); }});
/// \endcode
template <class Decode, class Fn> struct decoded {
  Decode decode;
  Fn fn;
};
template <class Decode, class Fn> decoded(Decode, Fn) -> decoded<Decode, Fn>;

namespace detail {
template <class T> struct is_decoded : std::false_type {};
template <class D, class F> struct is_decoded<decoded<D, F>> : std::true_type {};
/// One address per type: tags a decoded winner with its type.
template <class T> inline constexpr char type_tag = 0;
} // namespace detail

/// The callable `autotune` returns: `fn(args..., config)` with the config resolved per key.
template <class Fn, class KeyFn, class PruneFn, class CheckFn = no_check,
          class DefaultFn = no_default, class ResetFn = no_reset>
class tuned_function final {
public:
  tuned_function(std::shared_ptr<tunekit::tuner> t, Fn fn, KeyFn key_fn, PruneFn prune_fn,
                 CheckFn check_fn = {}, DefaultFn default_fn = {}, ResetFn reset_fn = {})
      : m_tuner(std::move(t)), m_fn(std::move(fn)), m_key_fn(std::move(key_fn)),
        m_prune_fn(std::move(prune_fn)), m_check_fn(std::move(check_fn)),
        m_default_fn(std::move(default_fn)), m_reset_fn(std::move(reset_fn)) {}

  /// Resolves the config for these arguments' key and returns `fn(args..., config)`.
  template <class... Args> decltype(auto) operator()(Args &&...args) {
    return call(m_defaults, args...);
  }

  /// The same call with per-call options: `scale.with({.verbose = true})(x, y, n)`.
  [[nodiscard]] auto with(call_options o) { return bound{this, std::move(o)}; }

  /// A copy that validates each candidate's output after it is measured:
  /// `check(const args&..., const config&) -> bool`; false marks it "wrong result".
  template <class C> [[nodiscard]] auto with_check(C check) const {
    return tuned_function<Fn, KeyFn, PruneFn, C, DefaultFn, ResetFn>(
        m_tuner, m_fn, m_key_fn, m_prune_fn, std::move(check), m_default_fn, m_reset_fn);
  }

  /// A copy with a default: `default_fn(const args&...) -> config`, served when neither a winner,
  /// an artifact nor a lookup table answers, so that a normal call never searches (only
  /// `TUNEKIT_ALWAYS_TUNE=1` does). The config must be one of the space.
  template <class D> [[nodiscard]] auto with_default(D default_fn) const {
    return tuned_function<Fn, KeyFn, PruneFn, CheckFn, D, ResetFn>(
        m_tuner, m_fn, m_key_fn, m_prune_fn, m_check_fn, std::move(default_fn), m_reset_fn);
  }

  /// A copy for a function that writes its arguments: `reset(args&..., const config&)` puts them
  /// back as the caller passed them (restores a copy it keeps, zeroes an accumulator). While
  /// tuning it runs before every run of a candidate, outside the timed region of tunekit's
  /// measurers, and once more after the search, so that the call with the winner makes what one
  /// call with it makes. A resolved call never calls it.
  template <class R> [[nodiscard]] auto with_reset(R reset_fn) const {
    return tuned_function<Fn, KeyFn, PruneFn, CheckFn, DefaultFn, R>(
        m_tuner, m_fn, m_key_fn, m_prune_fn, m_check_fn, m_default_fn, std::move(reset_fn));
  }

  /// Options used by plain calls.
  tuned_function &set_defaults(call_options o) {
    m_defaults = std::move(o);
    return *this;
  }

  [[nodiscard]] tunekit::tuner &tuner() const noexcept { return *m_tuner; }
  /// The wrapped function.
  [[nodiscard]] const Fn &function() const noexcept { return m_fn; }

  /// Calls the wrapped function with `c` (decoded first for a `tunekit::decoded` function).
  template <class... Args> decltype(auto) invoke_with(const config &c, Args &...args) const {
    if constexpr (detail::is_decoded<Fn>::value) {
      return std::invoke(m_fn.fn, args..., m_fn.decode(c));
    } else {
      return std::invoke(m_fn, args..., c);
    }
  }

  /// The key of these arguments; an exception of key_fn becomes a `tunekit::error` naming the
  /// tuner.
  template <class... Args> [[nodiscard]] key key_of(const Args &...args) const {
    return key_for(nullptr, args...);
  }

  template <class... Args> decltype(auto) call(const call_options &o, Args &...args) {
    if (!o.autotune) [[unlikely]] {
      if (o.pinned.empty()) {
        return invoke_with(m_tuner->space()[0], args...);
      }
      const config c = detail::tuner_access::disabled_config(*m_tuner, o);
      return invoke_with(c, args...);
    }
    const key k = key_for(&o, std::as_const(args)...);
    // A pinned, verbose or per-call `off` call is resolved (`off` never serves a winner).
    if (o.pinned.empty() && !o.verbose && o.effort != effort::off) [[likely]] {
      if (const detail::winner *w = detail::tuner_access::find_hot(*m_tuner, m_memo, k))
          [[likely]] {
        if constexpr (detail::is_decoded<Fn>::value) {
          using decoded_type = std::remove_cvref_t<decltype(m_fn.decode(w->cfg))>;
          const void *tag = &detail::type_tag<decoded_type>;
          const void *d = w->find_decoded(tag);
          if (d == nullptr) [[unlikely]] {
            d = w->attach(tag, std::make_shared<const decoded_type>(m_fn.decode(w->cfg)));
          }
          if (d != nullptr) [[likely]] {
            return std::invoke(m_fn.fn, args..., *static_cast<const decoded_type *>(d));
          }
        }
        return invoke_with(w->cfg, args...);
      }
    }
    auto prune = [&](const config &c) -> bool {
      return static_cast<bool>(std::invoke(m_prune_fn, c, std::as_const(args)...));
    };
    auto run = [&](const config &c) { static_cast<void>(invoke_with(c, args...)); };
    auto check = [&](const config &c) -> bool {
      return static_cast<bool>(std::invoke(m_check_fn, std::as_const(args)..., c));
    };
    auto dflt = [&]() -> config {
      if constexpr (std::is_same_v<DefaultFn, no_default>) {
        return config{};
      } else {
        return config(std::invoke(m_default_fn, std::as_const(args)...));
      }
    };
    const detail::function_ref<config()> dflt_ref(dflt);
    auto reset = [&](const config &c) {
      if constexpr (!std::is_same_v<ResetFn, no_reset>) {
        std::invoke(m_reset_fn, args..., c);
      }
    };
    const detail::function_ref<void(const config &)> reset_ref(reset);
    const config &c = m_tuner->resolve(k, o, prune, run, check,
                                       std::is_same_v<DefaultFn, no_default> ? nullptr : &dflt_ref,
                                       std::is_same_v<ResetFn, no_reset> ? nullptr : &reset_ref);
    return invoke_with(c, args...);
  }

private:
  // key_fn's key; its exception becomes a `tunekit::error`, after a vote of the call's ranks when
  // `o` is a tuning call's options.
  template <class... Args>
  [[nodiscard]] key key_for(const call_options *o, const Args &...args) const {
    try {
      return key(std::invoke(m_key_fn, args...));
    } catch (...) {
      detail::tuner_access::key_fn_failed(*m_tuner, std::current_exception(), o);
    }
  }

  struct bound {
    tuned_function *self;
    call_options opts;
    template <class... Args> decltype(auto) operator()(Args &&...args) {
      return self->call(opts, args...);
    }
  };

  std::shared_ptr<tunekit::tuner> m_tuner;
  Fn m_fn;
  KeyFn m_key_fn;
  PruneFn m_prune_fn;
  CheckFn m_check_fn;
  [[no_unique_address]] DefaultFn m_default_fn;
  [[no_unique_address]] ResetFn m_reset_fn;
  call_options m_defaults;
  detail::winner_memo m_memo; // the last winner this function served
};

/// Wraps `fn(args..., const config&)` so that its config is chosen by measurement.
///
/// \code
/// auto scale = tunekit::autotune(
///     "scale", space,
///     [](const float*, float*, float, std::int64_t n) { return tunekit::key{n}; },
///     [](const tunekit::config& c, const float*, float*, float, std::int64_t n) {
///       return c.get_int("BLOCK") <= n; },
///     launch_scale);
/// scale(x, y, 2.5f, n);
/// \endcode
template <class KeyFn, class PruneFn, class Fn>
[[nodiscard]] auto autotune(std::string name, config_space space, KeyFn key_fn, PruneFn prune_fn,
                            Fn fn, tuner_options options = {}) {
  auto t = std::make_shared<tunekit::tuner>(std::move(name), std::move(space), std::move(options));
  return tuned_function<Fn, KeyFn, PruneFn>(std::move(t), std::move(fn), std::move(key_fn),
                                            std::move(prune_fn));
}

} // namespace tunekit
