#pragma once
// The client side of the serving benchmarks: HTTP clients on threads of rank 0 posting requests to
// the worker, each request's latency taken at the client; and the same statistics for calling a
// function directly.

#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <numeric>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace bench_serve {

struct latency_stats {
  std::size_t requests = 0;
  std::size_t failed = 0;
  double seconds = 0; ///< wall time of the whole run
  double per_s = 0;   ///< requests / seconds
  double mean_us = 0;
  double p50_us = 0;
  double p99_us = 0;
};

inline latency_stats summarize(std::vector<double> us, double seconds, std::size_t failed) {
  latency_stats s;
  s.requests = us.size();
  s.failed = failed;
  s.seconds = seconds;
  s.per_s = seconds > 0 ? static_cast<double>(us.size()) / seconds : 0;
  if (us.empty()) {
    return s;
  }
  std::sort(us.begin(), us.end());
  s.mean_us = std::accumulate(us.begin(), us.end(), 0.0) / static_cast<double>(us.size());
  s.p50_us = us[us.size() / 2];
  s.p99_us = us[std::min(us.size() - 1, us.size() * 99 / 100)];
  return s;
}

/// Calls `fn` `n` times in a row; latency per call.
inline latency_stats time_direct(std::size_t n, const std::function<void()> &fn) {
  std::vector<double> us;
  us.reserve(n);
  const auto start = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < n; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    us.push_back(
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return summarize(std::move(us), seconds, 0);
}

/// `clients` threads, each with one keep-alive connection, each posting `per_client` requests
/// (`body(client, i)`) one after the other to `path`; a request counts as failed unless answered
/// 200.
inline latency_stats run_clients(int port, int clients, int per_client, const std::string &path,
                                 const std::function<std::string(int, int)> &body) {
  std::vector<std::vector<double>> us(static_cast<std::size_t>(clients));
  std::atomic<std::size_t> failed{0};
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      httplib::Client http("127.0.0.1", port);
      http.set_keep_alive(true);
      http.set_tcp_nodelay(true);
      http.set_read_timeout(300, 0);
      auto &mine = us[static_cast<std::size_t>(c)];
      mine.reserve(static_cast<std::size_t>(per_client));
      for (int i = 0; i < per_client; ++i) {
        const std::string b = body(c, i);
        const auto t0 = std::chrono::steady_clock::now();
        auto res = http.Post(path, b, "application/octet-stream");
        mine.push_back(
            std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0)
                .count());
        if (!res || res->status != 200) {
          ++failed;
        }
      }
    });
  }
  for (auto &t : threads) {
    t.join();
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::vector<double> all;
  for (auto &v : us) {
    all.insert(all.end(), v.begin(), v.end());
  }
  return summarize(std::move(all), seconds, failed.load());
}

/// Posts /stop to the worker.
inline void stop_worker(int port) {
  httplib::Client http("127.0.0.1", port);
  static_cast<void>(http.Post("/stop"));
}

} // namespace bench_serve
