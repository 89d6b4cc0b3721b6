// How tuning scales with ranks, on CPUs, with a simulated measurer: one process per rank under
// mpirun, over tunekit::mpi. Two sections, each timed on every rank:
//
//  1. split search: one key of a 46,656-config space searched by the default strategy within a
//     fixed budget and seed, each batch's candidates shared between the ranks
//     (`tuner_options::parallel_split`);
//  2. campaign: the calls of 16 keys (shapes) split between the ranks (`campaign`), each key's
//     space measured whole.
//
// A candidate's run sleeps for its simulated time (so that measuring takes wall time, as on a
// device, without using a CPU), and the simulated measurer reports that time, so every rank sees
// the same times and must reach the same winners. Rank 0 writes the JSON: the wall time of each
// section, the time the ranks spent in the tuned function (the measurement) and the rest (the
// strategy, the agreement collectives, the winner cache), and whether every rank holds the same
// winners.
//
// With --compile-ms, each candidate is compiled first, as a runtime-compiled kernel is: a simulated
// compile (a sleep of about that long) on this rank's share of --compile-threads slots (the host's
// compile threads, divided between its ranks), started when the tuner hands the candidate to its
// `candidate_preparer`; a run waits for its compile. With --lookahead, the proposals made ahead of
// the batch compile while it is measured.
//
//   mpirun -np N ./tunekit_scaling_bench --out scaling-N.json --cache-dir DIR
//          [--budget 256] [--batch 16] [--run-ms 1.0] [--poll-us 2000]
//          [--compile-ms 0] [--compile-threads 8] [--lookahead 0]

#include "ranks.hpp"

#include <tunekit/campaign.hpp>
#include <tunekit/mpi/communicator.hpp>
#include <tunekit/tunekit.hpp>

#include <nlohmann/json.hpp>

#include <mpi.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <semaphore>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;

struct settings {
  std::string out;
  std::filesystem::path cache_dir;
  std::size_t budget = 256;
  std::size_t batch = 16;
  double run_ms = 1.0;   // a run of the slowest candidate sleeps about 3 x this
  long poll_us = 2000;   // the MPI communicator's longest sleep between polls of a collective
  double compile_ms = 0; // 0: nothing to compile
  unsigned compile_threads = 8; // on the host, divided between its ranks
  std::size_t lookahead = 0;    // proposals made (and compiled) ahead of the batch measured
};

settings parse(int argc, char **argv) {
  settings s;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    const std::string v = argv[i + 1];
    if (a == "--out") {
      s.out = v;
    } else if (a == "--cache-dir") {
      s.cache_dir = v;
    } else if (a == "--budget") {
      s.budget = std::stoul(v);
    } else if (a == "--batch") {
      s.batch = std::stoul(v);
    } else if (a == "--run-ms") {
      s.run_ms = std::stod(v);
    } else if (a == "--poll-us") {
      s.poll_us = std::stol(v);
    } else if (a == "--compile-ms") {
      s.compile_ms = std::stod(v);
    } else if (a == "--compile-threads") {
      s.compile_threads = static_cast<unsigned>(std::stoul(v));
    } else if (a == "--lookahead") {
      s.lookahead = std::stoul(v);
    } else {
      throw tunekit::error("unknown option " + a);
    }
  }
  if (s.out.empty() || s.cache_dir.empty()) {
    throw tunekit::error("usage: tunekit_scaling_bench --out FILE --cache-dir DIR [--budget N] "
                         "[--batch N] [--run-ms MS] [--poll-us US] [--compile-ms MS] "
                         "[--compile-threads N] [--lookahead N]");
  }
  return s;
}

// Simulated time of a config for key n, in units of --run-ms: a bowl whose centre moves with the
// key, with an interaction between two parameters, between 1 and about 3.
double cost(const tunekit::config &c, std::int64_t n) {
  auto sq = [](double x) { return x * x; };
  const double a = static_cast<double>(c.get_int("a"));
  const double b = static_cast<double>(c.get_int("b"));
  const double d = static_cast<double>(c.get_int("c"));
  const double e = static_cast<double>(c.get_int("d"));
  const double shift = static_cast<double>(n % 5);
  return 1.0 + 0.05 * (sq(a - shift) + sq(b - 3) + sq(d - 2) + sq(e - 4)) +
         0.02 * std::abs(a - b) * std::abs(d - e) +
         0.01 * static_cast<double>(c.get_int("e") + c.get_int("f"));
}

tunekit::config_space big_space() {
  std::vector<tunekit::value> six;
  for (int v = 0; v < 6; ++v) {
    six.emplace_back(v);
  }
  return tunekit::config_space::product(
      {{"a", six}, {"b", six}, {"c", six}, {"d", six}, {"e", six}, {"f", six}});
}

tunekit::config_space small_space() {
  std::vector<tunekit::value> four;
  for (int v = 0; v < 4; ++v) {
    four.emplace_back(v);
  }
  return tunekit::config_space::product(
      {{"a", four}, {"b", four}, {"c", {1, 2}}, {"d", {4}}, {"e", {0}}, {"f", {0, 1}}});
}

// What a section did on this rank.
struct section {
  double wall_s = 0;
  double measure_s = 0;      // inside the tuned function, waiting for compiles apart
  double compile_wait_s = 0; // inside the tuned function, waiting for the config's compile
  std::size_t compiled = 0;
  std::string winners; // every winner, in order
};

// Simulated compiles: a config handed to `prepare` (or run before it was) sleeps for its compile
// time on one of `threads` slots, once per process.
class sleeping_compiler final : public tunekit::candidate_preparer {
public:
  sleeping_compiler(double ms, unsigned threads) : m_ms(ms), m_slots(threads) {}

  void prepare(std::span<const tunekit::config> configs) override {
    for (const auto &c : configs) {
      static_cast<void>(start(c));
    }
  }
  [[nodiscard]] std::optional<double> prepare_ms(const tunekit::config &c) const override {
    const std::lock_guard lock(m_mutex);
    const auto it = m_jobs.find(c.to_string());
    if (it == m_jobs.end() ||
        it->second.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
      return std::nullopt; // not done yet
    }
    return compile_ms(c);
  }
  // Waits for `c`'s compile (started now when nothing asked for it before): the seconds waited.
  double wait(const tunekit::config &c) {
    const auto job = start(c);
    const auto t0 = clock_type::now();
    job.wait();
    return bench::seconds_since(t0);
  }
  [[nodiscard]] std::size_t compiled() const {
    const std::lock_guard lock(m_mutex);
    return m_jobs.size();
  }

private:
  // 0.75 to 1.25 x the setting, by config.
  [[nodiscard]] double compile_ms(const tunekit::config &c) const {
    const auto h = std::hash<std::string>{}(c.to_string()) % 1000;
    return m_ms * (0.75 + 0.5 * static_cast<double>(h) / 1000.0);
  }
  std::shared_future<void> start(const tunekit::config &c) {
    const std::lock_guard lock(m_mutex);
    auto [it, fresh] = m_jobs.try_emplace(c.to_string());
    if (fresh) {
      it->second = std::async(std::launch::async, [this, ms = compile_ms(c)] {
                     m_slots.acquire();
                     std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(ms));
                     m_slots.release();
                   }).share();
    }
    return it->second;
  }

  double m_ms;
  std::counting_semaphore<1024> m_slots;
  mutable std::mutex m_mutex;
  std::map<std::string, std::shared_future<void>> m_jobs;
};

tunekit::tuner_options options(const settings &s, tunekit::communicator &comm,
                               const std::string &dir,
                               const std::shared_ptr<sleeping_compiler> &compiler) {
  tunekit::tuner_options o;
  if (compiler) {
    o.preparer = compiler;
    o.search.lookahead = s.lookahead;
  }
  o.version = "scaling-v1";
  o.comm = &comm;
  o.measurer = std::make_shared<tunekit::simulated_measurer>(
      [run_ms = s.run_ms](const tunekit::config &c, const tunekit::key &k) {
        return run_ms * cost(c, k[0].as_int());
      });
  tunekit::environment env;
  env.cache_dir = s.cache_dir / dir;
  env.log_dir = s.cache_dir / (dir + "-logs");
  o.process = tunekit::process_context{env, tunekit::launcher_info::from_env(), {}};
  o.hardware = tunekit::hardware_info{"host", "simulated device", "x86_64", 1, 1};
  o.policy = tunekit::measure_policy{1, 3, tunekit::statistic::mean};
  o.search.budget.max_evaluations = s.budget;
  o.search.batch_size = s.batch;
  o.search.seed = 11;
  o.search.rerank.band = 0; // simulated times have no noise to re-rank
  return o;
}

// This rank's compiler (none without --compile-ms): its share of the host's compile threads.
std::shared_ptr<sleeping_compiler> make_compiler(const settings &s,
                                                 const tunekit::communicator &comm) {
  if (s.compile_ms <= 0) {
    return nullptr;
  }
  const auto ranks = static_cast<unsigned>(comm.size()); // one host
  return std::make_shared<sleeping_compiler>(s.compile_ms, std::max(1U, s.compile_threads / ranks));
}

// The tuned function: a run waits for the config's compile (added to `out.compile_wait_s`), then
// sleeps for the config's simulated time, added to `out.measure_s`.
auto sleeping_run(const settings &s, section &out,
                  const std::shared_ptr<sleeping_compiler> &compiler) {
  return [&s, &out, compiler](std::int64_t n, const tunekit::config &c) {
    if (compiler) {
      out.compile_wait_s += compiler->wait(c);
    }
    const auto t0 = clock_type::now();
    std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(s.run_ms * cost(c, n)));
    out.measure_s += bench::seconds_since(t0);
    return c.to_string();
  };
}

section split_search(const settings &s, tunekit::communicator &comm) {
  section out;
  const auto compiler = make_compiler(s, comm);
  auto o = options(s, comm, "split", compiler);
  o.parallel_split = true;
  auto tuned = tunekit::autotune(
      "scaling.split", big_space(), [](std::int64_t n) { return tunekit::key{n}; },
      tunekit::keep_all{}, sleeping_run(s, out, compiler), o);
  comm.barrier();
  const auto t0 = clock_type::now();
  out.winners = tuned(std::int64_t{7});
  comm.barrier();
  out.wall_s = bench::seconds_since(t0);
  out.compiled = compiler ? compiler->compiled() : 0;
  return out;
}

section campaign(const settings &s, tunekit::communicator &comm, std::size_t shapes) {
  section out;
  const auto compiler = make_compiler(s, comm);
  auto o = options(s, comm, "campaign", compiler);
  auto tuned = tunekit::autotune(
      "scaling.campaign", small_space(), [](std::int64_t n) { return tunekit::key{n}; },
      tunekit::keep_all{}, sleeping_run(s, out, compiler), o);
  std::vector<std::tuple<std::int64_t>> calls;
  for (std::size_t k = 0; k < shapes; ++k) {
    calls.emplace_back(static_cast<std::int64_t>(100 + k));
  }
  comm.barrier();
  const auto t0 = clock_type::now();
  static_cast<void>(tunekit::campaign(tuned, calls, {.comm = &comm}));
  out.wall_s = bench::seconds_since(t0);
  out.compiled = compiler ? compiler->compiled() : 0;
  // Every rank now serves every key from the winner cache (its runs are not the campaign's).
  const section kept = out;
  for (const auto &[n] : calls) {
    out.winners += tuned(n) + "\n";
  }
  out.measure_s = kept.measure_s;
  out.compile_wait_s = kept.compile_wait_s;
  return out;
}

// The slowest rank's wall time, the most and least time a rank spent measuring, the most time a
// rank waited for compiles and spent elsewhere (the strategy, waiting in collectives for other
// ranks, the winner cache), and the configs compiled on all ranks together.
nlohmann::json report(tunekit::communicator &comm, const section &sec) {
  double hi[] = {sec.wall_s, sec.measure_s, sec.compile_wait_s,
                 sec.wall_s - sec.measure_s - sec.compile_wait_s};
  double measure_min = sec.measure_s;
  std::vector<double> compiled(static_cast<std::size_t>(comm.size()), 0.0);
  compiled[static_cast<std::size_t>(comm.rank())] = static_cast<double>(sec.compiled);
  comm.all_reduce_max(hi);
  comm.all_reduce_min(std::span(&measure_min, 1));
  comm.all_reduce_max(compiled); // each rank's own entry, zeros elsewhere
  double total = 0;
  for (const double c : compiled) {
    total += c;
  }
  return {{"wall_s", hi[0]},
          {"measure_s_max_rank", hi[1]},
          {"measure_s_min_rank", measure_min},
          {"compile_wait_s_max_rank", hi[2]},
          {"other_s_max_rank", hi[3]},
          {"compiled_total", total},
          {"same_winners", bench::same_everywhere(comm, sec.winners)}};
}

} // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int status = 0;
  try {
    const settings s = parse(argc, argv);
    tunekit::mpi::communicator comm(MPI_COMM_WORLD,
                                    {.timeout = std::chrono::seconds(300),
                                     .max_poll_interval = std::chrono::microseconds(s.poll_us)});
    if (comm.rank() == 0) {
      std::filesystem::remove_all(s.cache_dir); // every run tunes from scratch
    }
    comm.barrier();
    constexpr std::size_t shapes = 16;
    const section search = split_search(s, comm);
    const section camp = campaign(s, comm, shapes);
    nlohmann::json out = {{"ranks", comm.size()},
                          {"budget", s.budget},
                          {"batch", s.batch},
                          {"run_ms", s.run_ms},
                          {"poll_us", s.poll_us},
                          {"compile_ms", s.compile_ms},
                          {"compile_threads", s.compile_threads},
                          {"lookahead", s.lookahead},
                          {"shapes", shapes},
                          {"split_search", report(comm, search)},
                          {"campaign", report(comm, camp)}};
    if (comm.rank() == 0) {
      std::ofstream(s.out) << out.dump(2) << "\n";
      std::printf("%s\n", out.dump().c_str());
    }
    if (!out["split_search"]["same_winners"].get<bool>() ||
        !out["campaign"]["same_winners"].get<bool>()) {
      std::fprintf(stderr, "tunekit_scaling_bench: the ranks hold different winners\n");
      status = 1;
    }
  } catch (const std::exception &e) {
    std::fprintf(stderr, "tunekit_scaling_bench: %s\n", e.what());
    status = 1;
  }
  MPI_Finalize();
  return status;
}
