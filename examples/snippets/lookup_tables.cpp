// The C++ of docs/lookup_tables.md, compiled as shown. Each block of the page stands below
// verbatim, between `// page:` and `// page end`, after the declarations the page leaves to the
// reader. scripts/check-doc-snippets.py fails when the page and this file drift apart. The page's
// layout is kept, so clang-format is off.
// clang-format off

#include <tunekit/lookup_table.hpp>
#include <tunekit/tunekit.hpp>

#include <memory>

// What the page leaves to the reader.
void launch_gemm(const float* a, const float* b, float* c, std::int64_t n, const tunekit::config& config);
const tunekit::config_space space = tunekit::config_space::product({{"BLOCK", {128, 256}}});
inline tunekit::key key_fn(const float*, const float*, float*, std::int64_t n) { return tunekit::key{n}; }
inline bool prune_fn(const tunekit::config&, const float*, const float*, float*, std::int64_t) { return true; }

// page: docs/lookup_tables.md block 1
tunekit::config tiled(std::int64_t block, std::int64_t warps) {
  tunekit::config c{{"BLOCK", block}, {"num_warps", warps}};
  c.set_template_id("tiled");  // the implementation this config belongs to
  return c;
}

auto make_gemm() {
  tunekit::tuner_options o;
  o.table.op_name = "gemm";
  o.table.params = tunekit::config{{"alpha", 1}, {"beta", 0}};
  // tunekit_source_hash(app TILED_SOURCE_HASH FILES tiled.cu) in CMake defines TILED_SOURCE_HASH
  o.table.template_hashes = {{"tiled", TILED_SOURCE_HASH}};
  // Either set TUNEKIT_LOOKUP_TABLE=/path/table.json (read once, when the tuner is built), or:
  o.table.lookup_table = std::make_shared<const tunekit::lookup_table>(
      tunekit::lookup_table::load("gemm_table.json"));
  return tunekit::autotune("gemm", space, key_fn, prune_fn, launch_gemm, o);
}
// page end

// page: docs/lookup_tables.md block 2
tunekit::tuner_options inductor_keys() {
  tunekit::tuner_options o;
  o.table.op_name = "mm";
  o.table.key_format = tunekit::table_key_format::inductor;
  // key_fn returns tunekit::key{std::string(
  //   "((torch.float16, [512, 512], [512, 1]), (torch.float16, [512, 512], [512, 1]))")}
  o.table.lookup_table = std::make_shared<const tunekit::lookup_table>(
      tunekit::lookup_table::load("inductor_table.json"));
  return o;
}
// page end
