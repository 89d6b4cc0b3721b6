// Runs the MPI tests (and the serving tests, which share this main) on every rank. MPI is
// initialised with MPI_THREAD_FUNNELED: the serving worker's rank 0 has HTTP threads, and only the
// thread that serves calls MPI. Rank 0 prints the usual GoogleTest report; other ranks print only
// their failures, prefixed with the rank. The exit code is nonzero when any rank failed.

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>

namespace {

class failure_printer final : public ::testing::EmptyTestEventListener {
public:
  explicit failure_printer(int rank) : m_rank(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult &r) override {
    if (r.failed()) {
      std::fprintf(stderr, "[rank %d] %s:%d: Failure\n%s\n", m_rank,
                   r.file_name() != nullptr ? r.file_name() : "?", r.line_number(), r.summary());
    }
  }

private:
  int m_rank;
};

} // namespace

int main(int argc, char **argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  ::testing::InitGoogleTest(&argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) {
    auto &listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new failure_printer(rank));
  }
  const int local = RUN_ALL_TESTS();
  int any = 0;
  MPI_Allreduce(&local, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any;
}
