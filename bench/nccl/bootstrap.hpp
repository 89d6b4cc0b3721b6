#pragma once
// The rank identity of a GPU benchmark's process and the ncclUniqueId of rank 0: over MPI when the
// benchmark is built with it (TUNEKIT_BENCH_WITH_MPI; MPI_Init is called here, MPI_Finalize is the
// caller's), else from the launcher's variables (RANK, LOCAL_RANK, WORLD_SIZE) with the id in the
// file TUNEKIT_NCCL_ID_FILE names.

#include <tunekit/error.hpp>
#include <tunekit/launcher.hpp>
#include <tunekit/nccl/error.hpp>

#include <nccl.h>

#if defined(TUNEKIT_BENCH_WITH_MPI)
#include <mpi.h>
#endif

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

namespace bench {

struct job {
  int rank = 0;
  int size = 1;
  int local_rank = 0;
  int local_size = 1; // ranks on this host
  bool mpi = false;
  tunekit::launcher_info launcher{}; // read once, in bootstrap
};

inline job bootstrap(int &argc, char **&argv, ncclUniqueId &id) {
  job j;
  j.launcher = tunekit::launcher_info::from_env();
#if defined(TUNEKIT_BENCH_WITH_MPI)
  MPI_Init(&argc, &argv);
  j.mpi = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &j.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &j.size);
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, j.rank, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &j.local_rank);
  MPI_Comm_size(node, &j.local_size);
  MPI_Comm_free(&node);
  if (j.rank == 0) {
    tunekit::nccl::check(ncclGetUniqueId(&id), "ncclGetUniqueId");
  }
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
#else
  static_cast<void>(argc);
  static_cast<void>(argv);
  const auto &l = j.launcher;
  j.rank = l.rank;
  j.size = l.world_size;
  j.local_rank = l.local_rank;
  j.local_size = l.world_size; // one host: the file is shared
  const char *file = std::getenv("TUNEKIT_NCCL_ID_FILE");
  if (file == nullptr) {
    throw tunekit::error("built without MPI: set TUNEKIT_NCCL_ID_FILE for the ncclUniqueId");
  }
  const std::filesystem::path path(file);
  if (j.rank == 0) {
    tunekit::nccl::check(ncclGetUniqueId(&id), "ncclGetUniqueId");
    const auto tmp = path.string() + ".tmp";
    std::ofstream(tmp, std::ios::binary).write(reinterpret_cast<const char *>(&id), sizeof id);
    std::filesystem::rename(tmp, path);
  } else {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!std::filesystem::exists(path)) {
      if (std::chrono::steady_clock::now() > until) {
        throw tunekit::error("no ncclUniqueId in " + path.string() + " after 60 s");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    std::ifstream(path, std::ios::binary).read(reinterpret_cast<char *>(&id), sizeof id);
  }
#endif
  return j;
}

} // namespace bench
