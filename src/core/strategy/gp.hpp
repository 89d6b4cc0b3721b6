#pragma once
// A Gaussian process over the positions of a discrete space, behind the hybrid's proposals by
// expected improvement (`tpe_settings::gaussian_process`).

#include <tunekit/strategy/search_space.hpp>

#include <Eigen/Dense>

#include <cstdint>
#include <utility>
#include <vector>

namespace tunekit::detail {

/// A Gaussian process regression of standardised log time over configs. The distance between two
/// configs is the root mean square over parameters of their difference: for an ordered parameter
/// the difference of positions over the domain's span, for another 0 or 1. The covariance is a
/// Matern 5/2 of that distance over a length; the length and the noise are those of a small grid
/// under which the results are most likely (the log marginal likelihood).
class gaussian_process {
public:
  /// `ordered[p]`: parameter p's positions are related by their distance.
  gaussian_process(const search_space &space, std::vector<bool> ordered)
      : m_space(&space), m_ordered(std::move(ordered)) {}

  /// Fits the results (`digits[i]` took `log_time[i]`, finite); false with fewer than two.
  bool fit(std::vector<std::vector<std::uint32_t>> digits, const std::vector<double> &log_time);

  /// Tells the process the configs at `pending` (not measured yet) at their own predictions, with
  /// the fitted length and noise: its mean stays, its uncertainty about them and their
  /// surroundings falls (a kriging believer, for the proposals of a batch). The best result stays
  /// the best one fitted. After a fit that returned true.
  void believe(const std::vector<std::vector<std::uint32_t>> &pending);

  /// The expected improvement, in standard deviations of the fitted log times, of the config at
  /// `d` over the best fitted result less `margin` (after a fit that returned true).
  [[nodiscard]] double expected_improvement(const std::vector<std::uint32_t> &d,
                                            double margin = 0.01) const;

  /// The lower confidence bound of the config at `d`: its predicted standardised log time less
  /// `deviations` standard deviations of the prediction (after a fit that returned true). The
  /// lowest bound is where the process is unsure and the prediction not poor.
  [[nodiscard]] double lower_confidence_bound(const std::vector<std::uint32_t> &d,
                                              double deviations) const;

  /// The fitted length of the covariance (0 before a fit).
  [[nodiscard]] double length() const noexcept { return m_length; }
  /// The log marginal likelihood of the fitted results (up to a constant the same for every
  /// process fitted to them), by which processes of other distances compare.
  [[nodiscard]] double log_likelihood() const noexcept { return m_log_likelihood; }

private:
  [[nodiscard]] double distance2(const std::vector<std::uint32_t> &a,
                                 const std::vector<std::uint32_t> &b) const;
  // The squared distances between every two of `x`.
  [[nodiscard]] Eigen::MatrixXd distances2(const std::vector<std::vector<std::uint32_t>> &x) const;
  [[nodiscard]] double covariance(double dist2, double length) const;
  // The posterior mean and standard deviation of the standardised log time at `d`.
  [[nodiscard]] std::pair<double, double> predict(const std::vector<std::uint32_t> &d) const;

  const search_space *m_space;
  std::vector<bool> m_ordered;
  std::vector<std::vector<std::uint32_t>> m_x;
  Eigen::VectorXd m_y;             // the standardised log times, then the believed predictions
  Eigen::VectorXd m_alpha;         // K^-1 y
  Eigen::LLT<Eigen::MatrixXd> m_k; // K = L L^T
  double m_length = 0;
  double m_noise = 0;
  double m_log_likelihood = 0;
  double m_best = 0; // the smallest standardised result
};

} // namespace tunekit::detail
