#pragma once
// A non-owning reference to a callable, used where the type-erased core calls back into the
// thin templates on top of it (the referenced callable must outlive the call).

#include <memory>
#include <type_traits>
#include <utility>

namespace tunekit::detail {

template <class Signature> class function_ref;

template <class R, class... Args> class function_ref<R(Args...)> final {
public:
  template <class F>
  requires(!std::is_same_v<std::remove_cvref_t<F>, function_ref> &&
           std::is_invocable_r_v<R, F &, Args...>) function_ref(F &f)
  noexcept // NOLINT(google-explicit-constructor)
      : m_obj(const_cast<void *>(static_cast<const void *>(std::addressof(f)))),
        m_call([](void *obj, Args... args) -> R {
          return (*static_cast<std::remove_reference_t<F> *>(obj))(std::forward<Args>(args)...);
        }) {}

  R operator()(Args... args) const { return m_call(m_obj, std::forward<Args>(args)...); }

private:
  void *m_obj;
  R (*m_call)(void *, Args...);
};

} // namespace tunekit::detail
