// The hybrid's Gaussian process (gp.hpp).

#include "gp.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <utility>

namespace tunekit::detail {

namespace {

// The grid of lengths (in root-mean-square differences of positions) and noises (in variances of
// the standardised log time) the fit chooses from.
constexpr double lengths[] = {0.15, 0.25, 0.4, 0.7, 1.2};
constexpr double noises[] = {0.01, 0.1};

} // namespace

double gaussian_process::distance2(const std::vector<std::uint32_t> &a,
                                   const std::vector<std::uint32_t> &b) const {
  double sum = 0;
  for (std::size_t p = 0; p < a.size(); ++p) {
    if (a[p] == b[p]) {
      continue;
    }
    const std::size_t m = m_space->domain_size(p);
    if (m_ordered[p] && m > 1) {
      const double d =
          (static_cast<double>(a[p]) - static_cast<double>(b[p])) / static_cast<double>(m - 1);
      sum += d * d;
    } else {
      sum += 1;
    }
  }
  return a.empty() ? 0.0 : sum / static_cast<double>(a.size());
}

Eigen::MatrixXd
gaussian_process::distances2(const std::vector<std::vector<std::uint32_t>> &x) const {
  const auto n = static_cast<Eigen::Index>(x.size());
  Eigen::MatrixXd d2(n, n);
  for (Eigen::Index i = 0; i < n; ++i) {
    for (Eigen::Index j = 0; j <= i; ++j) {
      d2(i, j) = d2(j, i) =
          distance2(x[static_cast<std::size_t>(i)], x[static_cast<std::size_t>(j)]);
    }
  }
  return d2;
}

double gaussian_process::covariance(double dist2, double length) const {
  const double r = std::sqrt(5.0 * dist2) / length;
  return (1 + r + r * r / 3) * std::exp(-r);
}

bool gaussian_process::fit(std::vector<std::vector<std::uint32_t>> digits,
                           const std::vector<double> &log_time) {
  const auto n = static_cast<Eigen::Index>(log_time.size());
  if (n < 2 || digits.size() != log_time.size()) {
    return false;
  }
  Eigen::VectorXd y = Eigen::Map<const Eigen::VectorXd>(log_time.data(), n);
  y.array() -= y.mean();
  const double sd = std::sqrt(y.squaredNorm() / static_cast<double>(n));
  y /= sd > 0 ? sd : 1.0;
  m_best = y.minCoeff();
  const Eigen::MatrixXd d2 = distances2(digits);
  double best_ll = -std::numeric_limits<double>::infinity();
  for (double length : lengths) {
    for (double noise : noises) {
      Eigen::MatrixXd k = d2.unaryExpr([&](double v) { return covariance(v, length); });
      k.diagonal().array() += noise;
      Eigen::LLT<Eigen::MatrixXd> llt(k);
      if (llt.info() != Eigen::Success) {
        continue;
      }
      Eigen::VectorXd alpha = llt.solve(y);
      // log p(y) up to a constant: -y^T K^-1 y / 2 - log det(L).
      const double ll = -0.5 * y.dot(alpha) - llt.matrixLLT().diagonal().array().log().sum();
      if (ll > best_ll) {
        best_ll = ll;
        m_alpha = std::move(alpha);
        m_k = std::move(llt);
        m_length = length;
        m_noise = noise;
      }
    }
  }
  if (!std::isfinite(best_ll)) {
    return false;
  }
  m_log_likelihood = best_ll;
  m_x = std::move(digits);
  m_y = std::move(y);
  return true;
}

void gaussian_process::believe(const std::vector<std::vector<std::uint32_t>> &pending) {
  if (pending.empty() || m_x.empty()) {
    return;
  }
  const auto told = static_cast<Eigen::Index>(m_x.size());
  const auto n = told + static_cast<Eigen::Index>(pending.size());
  Eigen::VectorXd y(n);
  y.head(told) = m_y;
  for (std::size_t k = 0; k < pending.size(); ++k) {
    y(told + static_cast<Eigen::Index>(k)) = predict(pending[k]).first;
  }
  m_x.insert(m_x.end(), pending.begin(), pending.end());
  Eigen::MatrixXd k = distances2(m_x).unaryExpr([&](double v) { return covariance(v, m_length); });
  k.diagonal().array() += m_noise;
  Eigen::LLT<Eigen::MatrixXd> llt(k);
  if (llt.info() != Eigen::Success) {
    m_x.resize(static_cast<std::size_t>(told)); // keep the process as fitted
    return;
  }
  m_alpha = llt.solve(y);
  m_k = std::move(llt);
  m_y = std::move(y);
}

std::pair<double, double> gaussian_process::predict(const std::vector<std::uint32_t> &d) const {
  const auto n = static_cast<Eigen::Index>(m_x.size());
  Eigen::VectorXd ks(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    ks(i) = covariance(distance2(d, m_x[static_cast<std::size_t>(i)]), m_length);
  }
  const double mu = ks.dot(m_alpha);
  m_k.matrixL().solveInPlace(ks);
  return {mu, std::sqrt(std::max(1.0 - ks.squaredNorm(), 1e-12))};
}

double gaussian_process::expected_improvement(const std::vector<std::uint32_t> &d,
                                              double margin) const {
  const auto [mu, sigma] = predict(d);
  const double gain = m_best - mu - margin;
  const double z = gain / sigma;
  const double cdf = 0.5 * std::erfc(-z / std::numbers::sqrt2);
  const double pdf = std::exp(-0.5 * z * z) / std::sqrt(2 * std::numbers::pi);
  return gain * cdf + sigma * pdf;
}

double gaussian_process::lower_confidence_bound(const std::vector<std::uint32_t> &d,
                                                double deviations) const {
  const auto [mu, sigma] = predict(d);
  return mu - deviations * sigma;
}

} // namespace tunekit::detail
