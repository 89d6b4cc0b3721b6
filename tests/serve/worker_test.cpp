// The serving worker under mpiexec with a real HTTP client on rank 0: one order on every rank,
// answers only from rank 0, concurrent clients, stop, health, a tuned function in the handler and
// the faults (a throwing handler, a follower that stops answering, SIGTERM, an oversized body,
// malformed HTTP).

#include "../mpi/mpi_test_support.hpp"
#include "frame.hpp"

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
#include <mutex>
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
    // Short sleeps between polls: a request costs two collectives (see bench/serve).
    m_tk.emplace(m_comm,
                 tunekit::mpi::communicator_options{.timeout = timeout, .max_poll_interval = 50us});
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
  c.set_tcp_nodelay(true); // else Nagle's algorithm and delayed acknowledgements add ~40 ms
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

namespace {

TEST(ServeWorkerFaults, AHandlerThrowingOnSomeRanksIsAnswered500AndServingGoesOn) {
  world_dup comm(10s);
  execution_log log;
  const int rank = world_rank();
  serve::worker w(
      comm.get(),
      [&log, rank](const serve::request &r) {
        log.entries.emplace_back(r.sequence, std::string(r.body));
        const bool odd = rank % 2 == 1;
        if ((r.body == "odd ranks throw" && odd) || (r.body == "rank 0 throws" && rank == 0)) {
          throw std::runtime_error("out of memory on rank " + std::to_string(rank));
        }
        if (r.body == "odd ranks throw 42" && odd) {
          throw 42;
        }
        return serve::response{.body = "ok"};
      },
      test_options());
  std::vector<std::pair<int, std::string>> answers;
  const serve::summary s = serve_with(w, [&](int port) {
    auto http = client_of(port);
    for (const char *body : {"odd ranks throw", "fine", "rank 0 throws", "odd ranks throw 42"}) {
      auto res = http.Post("/m", body, "text/plain");
      answers.emplace_back(res ? res->status : -1, res ? res->body : "no answer");
    }
  });
  EXPECT_EQ(s.reason, serve::stop_reason::stop_request) << s.error;
  EXPECT_EQ(s.requests, 4U);
  EXPECT_EQ(s.failed, 3U);
  EXPECT_EQ(log.entries.size(), 4U); // every rank ran every request, failing or not
  if (rank != 0) {
    return;
  }
  ASSERT_EQ(answers.size(), 4U);
  EXPECT_EQ(answers[0].first, 500);
  if (world_size() == 4) {
    EXPECT_TRUE(contains(answers[0].second, "threw on ranks 1, 3 of 4")) << answers[0].second;
    EXPECT_TRUE(contains(answers[0].second, "rank 3: out of memory on rank 3"))
        << answers[0].second;
  }
  EXPECT_TRUE(contains(answers[0].second, "rank 1: out of memory on rank 1")) << answers[0].second;
  EXPECT_EQ(answers[1], (std::pair<int, std::string>{200, "ok"}));
  EXPECT_EQ(answers[2].first, 500);
  EXPECT_TRUE(contains(answers[2].second, "threw on rank 0 of")) << answers[2].second;
  EXPECT_TRUE(contains(answers[2].second, "out of memory on rank 0")) << answers[2].second;
  EXPECT_EQ(answers[3].first, 500);
  EXPECT_TRUE(contains(answers[3].second, "not a std::exception")) << answers[3].second;
}

TEST(ServeWorkerFaults, AFollowerThatStopsAnsweringIsReportedWithinTheTimeoutAndEveryRankStops) {
  if (world_size() < 3) {
    GTEST_SKIP() << "needs three ranks";
  }
  static constexpr auto timeout = 300ms;
  world_dup comm(timeout);
  execution_log log;
  const int rank = world_rank();
  serve::worker w(
      comm.get(),
      [&log, rank](const serve::request &r) {
        log.entries.emplace_back(r.sequence, std::string(r.body));
        if (r.body == "rank 2 is lost" && rank == 2) {
          std::this_thread::sleep_for(3 * timeout); // gone, as far as the others can tell
        }
        return serve::response{.body = "ok"};
      },
      test_options());
  int status = 0;
  std::string reason;
  std::chrono::milliseconds waited{};
  int status_after = 0;
  const serve::summary s = serve_with(w, [&](int port) {
    auto http = client_of(port);
    EXPECT_EQ(http.Post("/m", "fine", "text/plain")->status, 200);
    const auto start = std::chrono::steady_clock::now();
    auto res = http.Post("/m", "rank 2 is lost", "text/plain");
    waited = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - start);
    status = res ? res->status : -1;
    reason = res ? res->body : "no answer";
    httplib::Client late("127.0.0.1", port);
    auto after = late.Post("/m", "after", "text/plain");
    status_after = after ? after->status : 503; // refused once the server closed
  });
  EXPECT_EQ(s.reason, serve::stop_reason::communicator_failed);
  EXPECT_FALSE(s.error.empty());
  if (rank == 0) {
    EXPECT_EQ(status, 503) << reason;
    EXPECT_TRUE(contains(reason, "out of step")) << reason;
    EXPECT_TRUE(contains(reason, "waited 300 ms")) << reason;
    EXPECT_LT(waited, 3 * timeout) << "answered after the lost rank came back";
    EXPECT_EQ(status_after, 503);
  }
  EXPECT_EQ(log.entries.size(), 2U);
  // Clean up for the next tests: rank 2 comes back and completes the reduction the others gave
  // up on, then gives up on the next step's frame broadcast, which the others now complete.
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank != 2) {
    std::vector<std::byte> frame(serve::detail::frame_bytes);
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Ibcast(frame.data(), static_cast<int>(frame.size()), MPI_BYTE, 0, comm.get().handle(),
               &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
  }
}

TEST(ServeWorkerFaults, SigtermOnRankZeroStopsEveryRank) {
  world_dup comm(10s);
  execution_log log;
  serve::worker w(comm.get(), echo(log, world_rank()), test_options());
  const serve::summary s = serve_with(w, [&](int port) {
    auto http = client_of(port);
    EXPECT_EQ(http.Post("/m", "one", "text/plain")->status, 200);
    std::raise(SIGTERM);
  });
  EXPECT_EQ(s.reason, serve::stop_reason::signal);
  EXPECT_EQ(s.requests, 1U);
}

TEST(ServeWorkerFaults, SigtermOnAFollowerStopsEveryRank) {
  world_dup comm(10s);
  execution_log log;
  const int last = world_size() - 1;
  serve::worker w(
      comm.get(),
      [&log, last](const serve::request &r) {
        log.entries.emplace_back(r.sequence, std::string(r.body));
        if (world_rank() == last && last > 0) {
          std::raise(SIGTERM); // as a launcher forwarding SIGTERM to one rank would
        }
        return serve::response{.body = "ok"};
      },
      test_options());
  const serve::summary s = serve_with(w, [&](int port) {
    auto http = client_of(port);
    EXPECT_EQ(http.Post("/m", "one", "text/plain")->status, 200);
    // The stop reaches rank 0 with that request's reduction; a second request finds it stopped.
    auto res = http.Post("/m", "two", "text/plain");
    EXPECT_TRUE(!res || res->status == 503);
  });
  EXPECT_EQ(s.reason, serve::stop_reason::signal);
  EXPECT_EQ(s.requests, 1U);
}

/// Sends `raw` bytes to rank 0's port and returns what comes back.
std::string raw_exchange(int port, const std::string &raw) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string reply;
  if (::connect(fd, reinterpret_cast<sockaddr *>(&addr), sizeof(addr)) == 0) {
    static_cast<void>(::send(fd, raw.data(), raw.size(), 0));
    char buf[4096];
    for (ssize_t n = 0; (n = ::recv(fd, buf, sizeof(buf), 0)) > 0;) {
      reply.append(buf, static_cast<std::size_t>(n));
    }
  }
  ::close(fd);
  return reply;
}

TEST(ServeWorkerFaults, OversizedAndMalformedRequestsAreAnsweredByRankZeroAlone) {
  world_dup comm(10s);
  execution_log log;
  serve::options o = test_options();
  o.max_request_bytes = 1024;
  serve::worker w(comm.get(), echo(log, world_rank()), o);
  int big_status = 0;
  std::string big_body;
  std::string malformed;
  std::string not_found;
  nlohmann::json health;
  int fine_status = 0;
  const serve::summary s = serve_with(w, [&](int port) {
    auto http = client_of(port);
    auto big = http.Post("/m", std::string(4096, 'x'), "text/plain");
    big_status = big ? big->status : -1;
    big_body = big ? big->body : "no answer";
    malformed = raw_exchange(port, "THIS IS NOT HTTP\r\n\r\n");
    not_found = raw_exchange(port, "GET /nothing HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    auto h = http.Get("/health");
    health = nlohmann::json::parse(h ? h->body : "{}");
    auto fine = http.Post("/m", std::string(1024, 'y'), "text/plain"); // at the limit
    fine_status = fine ? fine->status : -1;
  });
  EXPECT_EQ(s.reason, serve::stop_reason::stop_request) << s.error;
  EXPECT_EQ(s.requests, 1U) << "only the request within the limit reached the ranks";
  ASSERT_EQ(log.entries.size(), 1U);
  EXPECT_EQ(log.entries[0].second.size(), 3 + 1024U);
  if (world_rank() != 0) {
    return;
  }
  EXPECT_EQ(big_status, 413);
  EXPECT_TRUE(contains(big_body, "larger than 1024 bytes")) << big_body;
  EXPECT_TRUE(malformed.starts_with("HTTP/1.1 400")) << malformed;
  EXPECT_TRUE(contains(malformed, "malformed HTTP request")) << malformed;
  EXPECT_TRUE(not_found.starts_with("HTTP/1.1 404")) << not_found;
  EXPECT_TRUE(contains(not_found, "no endpoint GET /nothing")) << not_found;
  EXPECT_EQ(health["requests_rejected"], 2) << health.dump();
  EXPECT_TRUE(contains(health["last_error"].get<std::string>(), "malformed")) << health.dump();
  EXPECT_EQ(fine_status, 200);
}

TEST(ServeWorkerFaults, RequestsBeyondTheQueueLimitAreAnswered503) {
  world_dup comm(10s);
  execution_log log;
  serve::options o = test_options();
  o.max_queued = 1;
  serve::worker w(
      comm.get(),
      [&log](const serve::request &r) {
        log.entries.emplace_back(r.sequence, std::string(r.body));
        std::this_thread::sleep_for(300ms); // every rank: the queue fills meanwhile
        return serve::response{.body = "ok"};
      },
      o);
  std::atomic<int> ok{0};
  std::atomic<int> full{0};
  std::string reason;
  std::mutex reason_mutex;
  const serve::summary s = serve_with(w, [&](int port) {
    std::vector<std::thread> clients;
    for (int c = 0; c < 4; ++c) {
      clients.emplace_back([&, c] {
        std::this_thread::sleep_for(std::chrono::milliseconds(20 * c)); // the first one runs
        auto http = client_of(port);
        auto res = http.Post("/m", std::to_string(c), "text/plain");
        if (res && res->status == 200) {
          ++ok;
        } else if (res && res->status == 503) {
          ++full;
          const std::lock_guard lock(reason_mutex);
          reason = res->body;
        }
      });
    }
    for (auto &t : clients) {
      t.join();
    }
  });
  EXPECT_EQ(s.reason, serve::stop_reason::stop_request) << s.error;
  EXPECT_EQ(s.requests, log.entries.size());
  if (world_rank() == 0) {
    EXPECT_EQ(ok + full, 4);
    EXPECT_GE(full.load(), 1) << "4 requests, one running and one queued at most";
    EXPECT_EQ(static_cast<std::uint64_t>(ok.load()), s.requests);
    EXPECT_TRUE(contains(reason, "already queued (options::max_queued)")) << reason;
  }
}

TEST(ServeWorker, AHandlerCallingATunedFunctionTunesEachNewKeyOnEveryRankTogether) {
  world_dup comm(10s);
  temp_dir dir;
  log_capture tlog;
  const int rank = world_rank();
  // Each rank alone would prefer another BLOCK; the agreement makes them pick one.
  auto meas = std::make_shared<tunekit::simulated_measurer>(
      [rank](const tunekit::config &c, const tunekit::key &k) {
        return 1.0 + 0.1 * static_cast<double>((block_index(c) + rank + k[0].as_int()) % 6);
      });
  auto o = options(dir.path(), meas, tlog, &comm.get());
  o.use_disk_cache = false;
  auto tuned = block_tuner("serve_block", o);
  std::vector<std::int64_t> chosen;
  serve::worker w(
      comm.get(),
      [&](const serve::request &r) {
        const auto n = std::stoll(std::string(r.body));
        const int index = tuned(n);
        chosen.push_back(index);
        return serve::response{.body = std::to_string(index)};
      },
      test_options());
  std::vector<std::string> answers;
  const serve::summary s = serve_with(w, [&](int port) {
    auto http = client_of(port);
    for (const char *n : {"10", "20", "10", "21", "20"}) {
      auto res = http.Post("/gemm", n, "text/plain");
      answers.push_back(res && res->status == 200 ? res->body : "failed");
    }
  });
  EXPECT_EQ(s.reason, serve::stop_reason::stop_request) << s.error;
  EXPECT_EQ(s.failed, 0U);
  EXPECT_EQ(tuned.tuner().searches(), 3U) << "one search per new key, on every rank";
  ASSERT_EQ(chosen.size(), 5U);
  EXPECT_EQ(chosen[0], chosen[2]);
  EXPECT_EQ(chosen[1], chosen[4]);
  const auto agreed = same_everywhere(chosen);
  EXPECT_EQ(std::count(agreed.begin(), agreed.end(), true), 5);
  if (rank == 0) {
    ASSERT_EQ(answers.size(), 5U);
    for (std::size_t i = 0; i < answers.size(); ++i) {
      EXPECT_EQ(answers[i], std::to_string(chosen[i]));
    }
  }
}

} // namespace
