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
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
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
  /// Drops the in-process winners of `keys`, stored keys as `find` takes them (not thread-safe
  /// against concurrent calls): their next call resolves them again.
  void forget(const std::vector<key> &keys);
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

// Signature checks of the callables `autotune` and `tuned_function` take (docs/function_tuner.md,
// "Compile errors"): a callable of the wrong signature stops the build with one static_assert
// naming it and the signature expected, instead of errors from inside std::invoke. A callable of
// one non-template signature (a function, a lambda without `auto` parameters) is checked when the
// tuned function is made; every callable again at the call, with the arguments' types. Each check
// is a class (`check_*<F, fits>`), so that a callable that fails both is reported once.

/// The parameters and result of a callable of one non-template signature; `known` is false for
/// the others (generic lambdas, overloaded call operators), which only the call checks.
template <class R, class... P> struct known_signature {
  static constexpr bool known = true;
  static constexpr std::size_t arity = sizeof...(P);
  using result = R;
  template <class A> static constexpr bool first_takes = false;
  template <class A> static constexpr bool last_takes = false;
};
template <class R, class P0, class... P> struct known_signature<R, P0, P...> {
  static constexpr bool known = true;
  static constexpr std::size_t arity = 1 + sizeof...(P);
  using result = R;
  /// Whether an argument of type `A` binds to the first (last) parameter.
  template <class A> static constexpr bool first_takes = std::is_convertible_v<A, P0>;
  template <class A>
  static constexpr bool last_takes =
      std::is_convertible_v<A, std::tuple_element_t<sizeof...(P), std::tuple<P0, P...>>>;
};
template <class F, class = void> struct signature { static constexpr bool known = false; };
template <class R, class... P> struct signature<R (*)(P...)> : known_signature<R, P...> {};
template <class R, class... P> struct signature<R (*)(P...) noexcept> : known_signature<R, P...> {};
template <class M> struct member_signature { static constexpr bool known = false; };
template <class R, class C, class... P>
struct member_signature<R (C::*)(P...)> : known_signature<R, P...> {};
template <class R, class C, class... P>
struct member_signature<R (C::*)(P...) const> : known_signature<R, P...> {};
template <class R, class C, class... P>
struct member_signature<R (C::*)(P...) noexcept> : known_signature<R, P...> {};
template <class R, class C, class... P>
struct member_signature<R (C::*)(P...) const noexcept> : known_signature<R, P...> {};
template <class F>
struct signature<F, std::void_t<decltype(&F::operator())>>
    : member_signature<decltype(&F::operator())> {};

/// `F` is invocable with `A...` and its result makes a `T` (`T(f(a...))`).
template <class T, class F, class... A>
concept invocable_to =
    std::is_invocable_v<F, A...> && std::is_constructible_v<T, std::invoke_result_t<F, A...>>;

template <class F> using sig = signature<std::remove_cvref_t<F>>;

/// What `decode(const config&)` makes (void when it cannot be called so).
template <class Fn> struct decoded_param { using type = void; };
template <class D, class F>
requires std::is_invocable_v<const D &, const config &>
struct decoded_param<decoded<D, F>> {
  using type = std::remove_cvref_t<std::invoke_result_t<const D &, const config &>>;
};
/// False for a `decoded` whose decode cannot be called with a config or returns nothing (which
/// `check_decode` reports; the function itself is then not checked).
template <class Fn>
inline constexpr bool decode_fits =
    !is_decoded<Fn>::value || !std::is_void_v<typename decoded_param<Fn>::type>;

// What a callable of a known signature must look like, before any call: its config parameter
// where the call passes the config, and a result of the right kind.
template <class Fn> constexpr bool fn_shape_fits() {
  if constexpr (is_decoded<Fn>::value) {
    using P = typename decoded_param<Fn>::type;
    using S = sig<decltype(std::declval<Fn>().fn)>;
    if constexpr (std::is_void_v<P>) {
      return true; // reported by check_decode
    } else if constexpr (S::known) {
      return S::arity >= 1 && S::template last_takes<const P &>;
    }
    return true;
  } else if constexpr (sig<Fn>::known) {
    return sig<Fn>::arity >= 1 && sig<Fn>::template last_takes<const config &>;
  }
  return true;
}
template <class KeyFn> constexpr bool key_fn_shape_fits() {
  if constexpr (sig<KeyFn>::known) {
    return std::is_constructible_v<key, typename sig<KeyFn>::result>;
  }
  return true;
}
template <class PruneFn> constexpr bool prune_fn_shape_fits() {
  if constexpr (sig<PruneFn>::known) {
    return sig<PruneFn>::arity >= 1 && sig<PruneFn>::template first_takes<const config &> &&
           std::is_constructible_v<bool, typename sig<PruneFn>::result>;
  }
  return true;
}
template <class CheckFn> constexpr bool check_fn_shape_fits() {
  if constexpr (sig<CheckFn>::known) {
    return sig<CheckFn>::arity >= 1 && sig<CheckFn>::template last_takes<const config &> &&
           std::is_constructible_v<bool, typename sig<CheckFn>::result>;
  }
  return true;
}
template <class DefaultFn> constexpr bool default_fn_shape_fits() {
  if constexpr (sig<DefaultFn>::known) {
    return std::is_constructible_v<config, typename sig<DefaultFn>::result>;
  }
  return true;
}
template <class ResetFn> constexpr bool reset_fn_shape_fits() {
  if constexpr (sig<ResetFn>::known) {
    return sig<ResetFn>::arity >= 1 && sig<ResetFn>::template last_takes<const config &>;
  }
  return true;
}

// The same at a call with arguments `Args&...` (as `tuned_function::call` takes them).
template <class Fn, class... Args> constexpr bool fn_fits() {
  if constexpr (is_decoded<Fn>::value) {
    using P = typename decoded_param<Fn>::type;
    if constexpr (std::is_void_v<P>) {
      return false;
    } else {
      return std::is_invocable_v<const decltype(std::declval<Fn>().fn) &, Args &..., const P &>;
    }
  } else {
    return std::is_invocable_v<const Fn &, Args &..., const config &>;
  }
}
template <class KeyFn, class... Args>
inline constexpr bool key_fn_fits = invocable_to<key, const KeyFn &, const Args &...>;
template <class PruneFn, class... Args>
inline constexpr bool prune_fn_fits =
    invocable_to<bool, PruneFn &, const config &, const Args &...>;
template <class CheckFn, class... Args>
inline constexpr bool check_fn_fits =
    invocable_to<bool, CheckFn &, const Args &..., const config &>;
template <class DefaultFn, class... Args>
inline constexpr bool default_fn_fits =
    std::is_same_v<DefaultFn, no_default> || invocable_to<config, DefaultFn &, const Args &...>;
template <class ResetFn, class... Args>
inline constexpr bool reset_fn_fits =
    std::is_same_v<ResetFn, no_reset> || std::is_invocable_v<ResetFn &, Args &..., const config &>;

// One class per callable: making one with `fits` false fails its static_assert (once per
// callable type). `F` names the callable in the compiler's "In instantiation of" line.
template <class F, bool fits> struct check_plain_fn {
  static_assert(fits, "tunekit: the tuned function must be callable as fn(Args&..., const "
                      "tunekit::config&), Args being the call's arguments; see "
                      "docs/function_tuner.md");
};
template <class F, bool fits> struct check_decoded_fn {
  static_assert(fits, "tunekit: a decoded function must be callable as fn(Args&..., const P&), "
                      "Args being the call's arguments and P what decode(const "
                      "tunekit::config&) returns; see docs/function_tuner.md#decoded-configs");
};
template <class F, bool fits>
using check_fn =
    std::conditional_t<is_decoded<F>::value, check_decoded_fn<F, fits>, check_plain_fn<F, fits>>;
template <class D, bool fits> struct check_decode {
  static_assert(fits, "tunekit: decoded's decode must be callable as decode(const "
                      "tunekit::config&) and return a value; see "
                      "docs/function_tuner.md#decoded-configs");
};
template <class F, bool fits> struct check_key_fn {
  static_assert(fits, "tunekit: key_fn must be callable as key_fn(const Args&...) and return "
                      "tunekit::key (or something convertible); see docs/function_tuner.md");
};
template <class F, bool fits> struct check_prune_fn {
  static_assert(fits, "tunekit: prune_fn must be callable as prune_fn(const tunekit::config&, "
                      "const Args&...) and return bool; see docs/function_tuner.md");
};
template <class F, bool fits> struct check_check_fn {
  static_assert(fits, "tunekit: with_check's check must be callable as check(const Args&..., "
                      "const tunekit::config&) and return bool; see docs/function_tuner.md");
};
template <class F, bool fits> struct check_default_fn {
  static_assert(fits, "tunekit: with_default's default_fn must be callable as "
                      "default_fn(const Args&...) and return a tunekit::config; see "
                      "docs/function_tuner.md");
};
template <class F, bool fits> struct check_reset_fn {
  static_assert(fits, "tunekit: with_reset's reset must be callable as reset(Args&..., const "
                      "tunekit::config&); see docs/function_tuner.md");
};

/// The checks when a tuned function is made: callables of a known signature (consteval, so that
/// they run where it is made, before any call is compiled).
template <class Fn, class KeyFn, class PruneFn, class CheckFn, class DefaultFn, class ResetFn>
consteval void check_callables() {
  if constexpr (is_decoded<Fn>::value) {
    static_cast<void>(check_decode<decltype(std::declval<Fn>().decode), decode_fits<Fn>>{});
  }
  static_cast<void>(check_fn<Fn, fn_shape_fits<Fn>()>{});
  static_cast<void>(check_key_fn<KeyFn, key_fn_shape_fits<KeyFn>()>{});
  static_cast<void>(check_prune_fn<PruneFn, prune_fn_shape_fits<PruneFn>()>{});
  static_cast<void>(check_check_fn<CheckFn, check_fn_shape_fits<CheckFn>()>{});
  static_cast<void>(check_default_fn<DefaultFn, default_fn_shape_fits<DefaultFn>()>{});
  static_cast<void>(check_reset_fn<ResetFn, reset_fn_shape_fits<ResetFn>()>{});
}

/// The checks at a call with arguments `Args&...`; true when every callable fits it (the call is
/// then compiled, and only then, so that a wrong one adds no errors of its own).
template <class Fn, class KeyFn, class PruneFn, class CheckFn, class DefaultFn, class ResetFn,
          class... Args>
constexpr bool check_call() {
  check_callables<Fn, KeyFn, PruneFn, CheckFn, DefaultFn, ResetFn>();
  constexpr bool fn = fn_fits<Fn, Args...>();
  constexpr bool k = key_fn_fits<KeyFn, std::remove_cv_t<Args>...>;
  constexpr bool prune = prune_fn_fits<PruneFn, std::remove_cv_t<Args>...>;
  constexpr bool check = check_fn_fits<CheckFn, std::remove_cv_t<Args>...>;
  constexpr bool dflt = default_fn_fits<DefaultFn, std::remove_cv_t<Args>...>;
  constexpr bool reset = reset_fn_fits<ResetFn, Args...>;
  // A callable that failed above is not reported again (its check class is the same); when the
  // function does not take these arguments, the others are not checked against them.
  constexpr bool made = fn_shape_fits<Fn>() && key_fn_shape_fits<KeyFn>() &&
                        prune_fn_shape_fits<PruneFn>() && check_fn_shape_fits<CheckFn>() &&
                        default_fn_shape_fits<DefaultFn>() && reset_fn_shape_fits<ResetFn>();
  if constexpr (made && decode_fits<Fn>) {
    static_cast<void>(check_fn<Fn, fn>{});
    if constexpr (fn) {
      static_cast<void>(check_key_fn<KeyFn, k>{});
      static_cast<void>(check_prune_fn<PruneFn, prune>{});
      static_cast<void>(check_check_fn<CheckFn, check>{});
      static_cast<void>(check_default_fn<DefaultFn, dflt>{});
      static_cast<void>(check_reset_fn<ResetFn, reset>{});
    }
  }
  return fn && k && prune && check && dflt && reset;
}
} // namespace detail

/// The callable `autotune` returns: `fn(args..., config)` with the config resolved per key.
template <class Fn, class KeyFn, class PruneFn, class CheckFn = no_check,
          class DefaultFn = no_default, class ResetFn = no_reset>
class tuned_function;

namespace detail {
template <class T> struct is_tuned_function : std::false_type {};
template <class... T> struct is_tuned_function<tuned_function<T...>> : std::true_type {};
} // namespace detail

template <class Fn, class KeyFn, class PruneFn, class CheckFn, class DefaultFn, class ResetFn>
class tuned_function final {
public:
  tuned_function(std::shared_ptr<tunekit::tuner> t, Fn fn, KeyFn key_fn, PruneFn prune_fn,
                 CheckFn check_fn = {}, DefaultFn default_fn = {}, ResetFn reset_fn = {})
      : m_tuner(std::move(t)), m_fn(std::move(fn)), m_key_fn(std::move(key_fn)),
        m_prune_fn(std::move(prune_fn)), m_check_fn(std::move(check_fn)),
        m_default_fn(std::move(default_fn)), m_reset_fn(std::move(reset_fn)) {
    detail::check_callables<Fn, KeyFn, PruneFn, CheckFn, DefaultFn, ResetFn>();
  }

  /// Resolves the config for these arguments' key and returns `fn(args..., config)`.
  template <class... Args> decltype(auto) operator()(Args &&...args) {
    return call(m_defaults, args...);
  }

  /// The same call with per-call options: `scale.with({.verbose = true})(x, y, n)`.
  [[nodiscard]] auto with(call_options o) { return bound{this, std::move(o)}; }

  /// A copy that validates each candidate's output after it is measured:
  /// `check(const args&..., const config&) -> bool`; false marks it "wrong result".
  template <class C> [[nodiscard]] auto with_check(C check) const {
    detail::check_callables<Fn, KeyFn, PruneFn, C, DefaultFn, ResetFn>();
    return tuned_function<Fn, KeyFn, PruneFn, C, DefaultFn, ResetFn>(
        m_tuner, m_fn, m_key_fn, m_prune_fn, std::move(check), m_default_fn, m_reset_fn);
  }

  /// A copy with a default: `default_fn(const args&...) -> config`, served when neither a winner,
  /// an artifact nor a lookup table answers, so that a normal call never searches (only
  /// `TUNEKIT_ALWAYS_TUNE=1` does). The config must be one of the space.
  template <class D> [[nodiscard]] auto with_default(D default_fn) const {
    detail::check_callables<Fn, KeyFn, PruneFn, CheckFn, D, ResetFn>();
    return tuned_function<Fn, KeyFn, PruneFn, CheckFn, D, ResetFn>(
        m_tuner, m_fn, m_key_fn, m_prune_fn, m_check_fn, std::move(default_fn), m_reset_fn);
  }

  /// A copy for a function that writes its arguments: `reset(args&..., const config&)` puts them
  /// back as the caller passed them (restores a copy it keeps, zeroes an accumulator). While
  /// tuning it runs before every run of a candidate, outside the timed region of tunekit's
  /// measurers, and once more after the search, so that the call with the winner makes what one
  /// call with it makes. A resolved call never calls it.
  template <class R> [[nodiscard]] auto with_reset(R reset_fn) const {
    detail::check_callables<Fn, KeyFn, PruneFn, CheckFn, DefaultFn, R>();
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
    constexpr bool fits = detail::decode_fits<Fn> && detail::fn_fits<Fn, Args...>();
    static_cast<void>(
        detail::check_fn<Fn, (fits || !detail::decode_fits<Fn>)&&detail::fn_shape_fits<Fn>()>{});
    if constexpr (!fits) {
      return; // reported above
    } else if constexpr (detail::is_decoded<Fn>::value) {
      return std::invoke(m_fn.fn, args..., m_fn.decode(c));
    } else {
      return std::invoke(m_fn, args..., c);
    }
  }

  /// The key of these arguments; an exception of key_fn becomes a `tunekit::error` naming the
  /// tuner.
  template <class... Args> [[nodiscard]] key key_of(const Args &...args) const {
    constexpr bool fits = detail::key_fn_fits<KeyFn, Args...>;
    static_cast<void>(detail::check_key_fn < KeyFn,
                      fits && detail::key_fn_shape_fits<KeyFn>() > {});
    if constexpr (fits) {
      return key_for(nullptr, args...);
    } else {
      return key{}; // reported above
    }
  }

  /// `fn(args..., config)` with the config resolved for these arguments under `o`. A callable
  /// that does not fit these arguments stops the build with a static_assert naming it.
  template <class... Args> decltype(auto) call(const call_options &o, Args &...args) {
    if constexpr (detail::check_call<Fn, KeyFn, PruneFn, CheckFn, DefaultFn, ResetFn, Args...>()) {
      return resolve_and_call(o, args...);
    }
  }

private:
  template <class... Args> decltype(auto) resolve_and_call(const call_options &o, Args &...args) {
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
  detail::check_callables<Fn, KeyFn, PruneFn, no_check, no_default, no_reset>();
  auto t = std::make_shared<tunekit::tuner>(std::move(name), std::move(space), std::move(options));
  return tuned_function<Fn, KeyFn, PruneFn>(std::move(t), std::move(fn), std::move(key_fn),
                                            std::move(prune_fn));
}

} // namespace tunekit
