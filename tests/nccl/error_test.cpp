// NCCL results as errors, and what the communicator refuses before it touches NCCL. No GPU needed.

#include <tunekit/nccl/communicator.hpp>
#include <tunekit/nccl/error.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

namespace {

std::string what_of(void (*f)()) {
  try {
    f();
  } catch (const tunekit::error &e) {
    return e.what();
  }
  return "no exception";
}

bool contains(const std::string &text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

TEST(NcclError, DescribeNamesTheResultAndItsNumber) {
  const std::string d = tunekit::nccl::describe(ncclInvalidArgument);
  EXPECT_TRUE(contains(d, "ncclInvalidArgument (4): ")) << d;
  EXPECT_GT(d.size(), std::string("ncclInvalidArgument (4): ").size()) << d;
  EXPECT_TRUE(contains(tunekit::nccl::describe(ncclRemoteError), "ncclRemoteError (6)"));
  EXPECT_TRUE(contains(tunekit::nccl::describe(ncclNumResults), "ncclResult (8)"));
}

TEST(NcclError, CheckThrowsNamingTheCall) {
  EXPECT_NO_THROW(tunekit::nccl::check(ncclSuccess, "ncclAllReduce"));
  const std::string w = what_of([] { tunekit::nccl::check(ncclSystemError, "ncclAllReduce"); });
  EXPECT_TRUE(contains(w, "tunekit::nccl: ncclAllReduce failed: ncclSystemError (2)")) << w;
}

TEST(NcclError, VersionIsMajorMinorPatch) {
  const std::string v = tunekit::nccl::version();
  EXPECT_EQ(std::count(v.begin(), v.end(), '.'), 2) << v;
  EXPECT_EQ(v.substr(0, 2), "2.") << v;
}

TEST(NcclCommunicator, RefusesANullComm) {
  const std::string w = what_of([] { tunekit::nccl::communicator c(nullptr, nullptr); });
  EXPECT_TRUE(contains(w, "null ncclComm_t")) << w;
}

TEST(NcclCommunicator, RefusesANegativeTimeout) {
  const std::string w = what_of([] {
    tunekit::nccl::communicator c(nullptr, nullptr, {.timeout = std::chrono::milliseconds(-1)});
  });
  EXPECT_TRUE(contains(w, "timeout must not be negative")) << w;
}

} // namespace
