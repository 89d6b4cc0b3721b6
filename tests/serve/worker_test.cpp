// The serving worker under mpiexec with a real HTTP client on rank 0: one order on every rank,
// answers only from rank 0, concurrent clients, stop, health, a tuned function in the handler and
// the faults (a throwing handler, a follower that stops answering, SIGTERM, an oversized body,
// malformed HTTP).

#include "../mpi/mpi_test_support.hpp"

#include <tunekit/serve.hpp>

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

using namespace tunekit_mpi_test;
using namespace std::chrono_literals;
namespace serve = tunekit::serve;

/// A duplicate of MPI_COMM_WORLD and tunekit's communicator over it, so that a test that breaks
/// its communicator leaves the others alone.
class world_dup {
public:
  explicit world_dup(std::chrono::milliseconds timeout) {
    MPI_Comm_dup(MPI_COMM_WORLD, &m_comm);
    m_tk.emplace(m_comm, tunekit::mpi::communicator_options{.timeout = timeout});
  }
  ~world_dup() {
    m_tk.reset();
    MPI_Comm_free(&m_comm);
  }
  world_dup(const world_dup &) = delete;
  world_dup &operator=(const world_dup &) = delete;
  tunekit::mpi::communicator &get() { return *m_tk; }

private:
  MPI_Comm m_comm = MPI_COMM_NULL;
  std::optional<tunekit::mpi::communicator> m_tk;
};

serve::options test_options() {
  serve::options o;
  o.heartbeat = 100ms;
  return o;
}

/// Every rank executes `(sequence, path + body)` pairs; each rank logs what it executed.
struct execution_log {
  std::vector<std::pair<std::uint64_t, std::string>> entries;

  [[nodiscard]] std::string text() const {
    std::string t;
    for (const auto &[seq, what] : entries) {
      t += std::to_string(seq) + " " + what + "\n";
    }
    return t;
  }
};

/// A handler that logs the request and answers its body tagged with this rank.
serve::handler echo(execution_log &log, int rank) {
  return [&log, rank](const serve::request &r) {
    log.entries.emplace_back(r.sequence, std::string(r.path) + " " + std::string(r.body));
    return serve::response{.body = std::string(r.body) + "@" + std::to_string(rank)};
  };
}

/// Serves on every rank while `client(port)` runs on a thread of rank 0; posts /stop when the
/// client returns (answered 503 or refused when the worker already stopped).
serve::summary serve_with(serve::worker &w, const std::function<void(int)> &client) {
  if (world_rank() != 0) {
    return w.serve();
  }
  std::thread t([&] {
    client(w.port());
    httplib::Client c("127.0.0.1", w.port());
    static_cast<void>(c.Post("/stop"));
  });
  serve::summary s = w.serve();
  t.join();
  return s;
}

httplib::Client client_of(int port) {
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(60, 0);
  c.set_keep_alive(true);
  return c;
}

bool contains(const std::string &text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

TEST(ServeWorker, ConcurrentClientsAreServedInOneOrderOnEveryRankAndAnsweredByRankZero) {
  world_dup comm(10s);
  execution_log log;
  serve::worker w(comm.get(), echo(log, world_rank()), test_options());
  constexpr int clients = 8;
  constexpr int per_client = 500;
  std::atomic<int> wrong_answers{0};
  std::atomic<int> missing_answers{0};
  const serve::summary s = serve_with(w, [&](int port) {
    std::vector<std::thread> threads;
    for (int c = 0; c < clients; ++c) {
      threads.emplace_back([&, c] {
        auto http = client_of(port);
        for (int i = 0; i < per_client; ++i) {
          std::string body = "c"; // (GCC 12 warns falsely on "c" + std::to_string(c) + ...)
          body.append(std::to_string(c)).append("-").append(std::to_string(i));
          auto res = http.Post("/echo", body, "text/plain");
          if (!res) {
            ++missing_answers;
          } else if (res->status != 200 || res->body != body + "@0") {
            ++wrong_answers;
          }
        }
      });
    }
    for (auto &t : threads) {
      t.join();
    }
  });
  EXPECT_EQ(s.reason, serve::stop_reason::stop_request) << s.error;
  EXPECT_EQ(wrong_answers.load(), 0);
  EXPECT_EQ(missing_answers.load(), 0);
  constexpr std::size_t total = std::size_t{clients} * per_client;
  EXPECT_EQ(s.requests, total);
  EXPECT_EQ(s.failed, 0U);
  ASSERT_EQ(log.entries.size(), total);
  // Sequence numbers 0..n-1 in execution order; every request exactly once; each client's
  // requests in the order it sent them; the same log on every rank.
  std::vector<std::string> bodies;
  std::vector<int> next_of_client(clients, 0);
  for (std::size_t i = 0; i < total; ++i) {
    EXPECT_EQ(log.entries[i].first, i);
    const std::string &what = log.entries[i].second;
    ASSERT_TRUE(what.starts_with("/echo c")) << what;
    const auto dash = what.find('-');
    const int c = std::stoi(what.substr(7, dash - 7));
    const int n = std::stoi(what.substr(dash + 1));
    EXPECT_EQ(n, next_of_client[static_cast<std::size_t>(c)]) << "client " << c << " out of order";
    next_of_client[static_cast<std::size_t>(c)] = n + 1;
    bodies.push_back(what);
  }
  std::sort(bodies.begin(), bodies.end());
  EXPECT_EQ(std::adjacent_find(bodies.begin(), bodies.end()), bodies.end()) << "a duplicate";
  EXPECT_TRUE(same_text_everywhere(log.text())) << "ranks executed different sequences";
}

TEST(ServeWorker, HealthReportsRanksRequestsAndTheLastError) {
  world_dup comm(10s);
  execution_log log;
  const int rank = world_rank();
  serve::worker w(
      comm.get(),
      [&log, rank](const serve::request &r) {
        log.entries.emplace_back(r.sequence, std::string(r.body));
        if (r.body == "fail" && rank == world_size() - 1) {
          throw std::runtime_error("no such model");
        }
        return serve::response{.body = "ok"};
      },
      test_options());
  nlohmann::json before;
  nlohmann::json after;
  const serve::summary s = serve_with(w, [&](int port) {
    auto http = client_of(port);
    static_cast<void>(http.Post("/a", "1", "text/plain"));
    static_cast<void>(http.Post("/a", "2", "text/plain"));
    auto h = http.Get("/health");
    ASSERT_TRUE(h);
    EXPECT_EQ(h->status, 200);
    before = nlohmann::json::parse(h->body);
    static_cast<void>(http.Post("/a", "fail", "text/plain"));
    h = http.Get("/health");
    ASSERT_TRUE(h);
    after = nlohmann::json::parse(h->body);
  });
  EXPECT_EQ(s.requests, 3U);
  EXPECT_EQ(s.failed, 1U);
  if (rank == 0) {
    EXPECT_EQ(before["ranks"], world_size());
    EXPECT_EQ(before["requests_served"], 2);
    EXPECT_EQ(before["state"], "serving");
    EXPECT_TRUE(before["last_error"].is_null()) << before.dump();
    EXPECT_EQ(after["requests_served"], 3);
    EXPECT_EQ(after["requests_failed"], 1);
    ASSERT_TRUE(after["last_error"].is_string()) << after.dump();
    EXPECT_TRUE(contains(after["last_error"].get<std::string>(), "no such model")) << after.dump();
  }
}

TEST(ServeWorker, StopEndsServeOnEveryRankAndTheCommunicatorStaysUsable) {
  world_dup comm(10s);
  execution_log log;
  serve::worker w(comm.get(), echo(log, world_rank()), test_options());
  int stop_status = 0;
  std::string stop_body;
  int after_status = 0;
  const serve::summary s = serve_with(w, [&](int port) {
    auto http = client_of(port);
    static_cast<void>(http.Post("/x", "before", "text/plain"));
    auto res = http.Post("/stop");
    ASSERT_TRUE(res);
    stop_status = res->status;
    stop_body = res->body;
    // After the stop: answered 503, or refused once the server has closed.
    httplib::Client late("127.0.0.1", port);
    auto r2 = late.Post("/x", "after", "text/plain");
    after_status = r2 ? r2->status : 503;
  });
  EXPECT_EQ(s.reason, serve::stop_reason::stop_request);
  EXPECT_EQ(s.requests, 1U);
  ASSERT_EQ(log.entries.size(), 1U);
  EXPECT_EQ(log.entries[0].second, "/x before");
  if (world_rank() == 0) {
    EXPECT_EQ(stop_status, 200) << stop_body;
    EXPECT_EQ(after_status, 503);
  }
  // The application still owns a working communicator.
  std::array<double, 1> v{static_cast<double>(world_rank())};
  comm.get().all_reduce_max(v);
  EXPECT_EQ(v[0], world_size() - 1);
}

TEST(ServeWorker, StopCallFromRankZero) {
  world_dup comm(10s);
  execution_log log;
  serve::worker w(comm.get(), echo(log, world_rank()), test_options());
  std::thread stopper;
  if (world_rank() == 0) {
    stopper = std::thread([&w] {
      std::this_thread::sleep_for(200ms); // a few heartbeats first
      w.stop();
    });
  }
  const serve::summary s = w.serve();
  if (stopper.joinable()) {
    stopper.join();
  }
  EXPECT_EQ(s.reason, serve::stop_reason::stop_call) << s.error;
  EXPECT_EQ(s.requests, 0U);
}

TEST(ServeWorker, RankZeroCannotListenAndEveryRankThrows) {
  world_dup comm(10s);
  execution_log log;
  serve::worker first(comm.get(), echo(log, world_rank()), test_options());
  serve::options o = test_options();
  o.port = first.port();
  const std::string what =
      tunekit_test::error_of([&] { serve::worker second(comm.get(), echo(log, 0), o); });
  EXPECT_TRUE(contains(what, "could not listen on 127.0.0.1:" + std::to_string(first.port())))
      << what;
  o.port = 70000;
  EXPECT_TRUE(contains(
      tunekit_test::error_of([&] { serve::worker bad(comm.get(), echo(log, 0), o); }), "70000"));
} // `first` never served: its socket is closed by its destructor

} // namespace
