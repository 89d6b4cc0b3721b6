// `tunekit artifact check | emit`: validate a directory of artifacts, write artifacts from the
// winner cache.

#include "commands.hpp"

#include "json_io.hpp"

#include <tunekit/artifact.hpp>
#include <tunekit/environment.hpp>
#include <tunekit/error.hpp>

#include <algorithm>
#include <iostream>

namespace tunekit::cli {

using detail::json;

int artifact_check(const artifact_check_options &o) {
  if (!std::filesystem::is_directory(o.dir)) {
    throw error("no such directory: " + o.dir.string());
  }
  std::vector<std::filesystem::path> files;
  for (const auto &e : std::filesystem::directory_iterator(o.dir)) {
    if (e.is_regular_file() && e.path().extension() == ".json") {
      files.push_back(e.path());
    }
  }
  std::sort(files.begin(), files.end());
  std::size_t bad = 0;
  json list = json::array();
  for (const auto &f : files) {
    const std::string problem = artifact_file_problem(f);
    bad += problem.empty() ? 0 : 1;
    if (o.json) {
      json r{{"file", f.string()}, {"ok", problem.empty()}};
      if (!problem.empty()) {
        r["problem"] = problem;
      }
      list.push_back(std::move(r));
    } else if (problem.empty()) {
      std::cout << "ok   " << f.string() << "\n";
    } else {
      std::cout << "BAD  " << f.string() << ": " << problem << "\n";
    }
  }
  if (o.json) {
    std::cout << json{{"dir", o.dir.string()}, {"files", list}, {"bad", bad}}.dump(2) << "\n";
  } else {
    std::cout << files.size() << (files.size() == 1 ? " artifact" : " artifacts") << ", " << bad
              << " bad\n";
  }
  return bad == 0 ? 0 : 1;
}

int artifact_emit(const global_options &g, const artifact_emit_options &o) {
  const std::filesystem::path out = o.out.empty() ? environment::from_env().artifact_dir : o.out;
  if (out.empty()) {
    throw error("no artifact directory: pass --out or set TUNEKIT_ARTIFACT_DIR");
  }
  const winner_cache cache = open_cache(g);
  const auto entries = valid_entries(cache, o.function, o.version);
  if (entries.empty()) {
    throw error("no valid winner-cache entries of function '" + o.function + "' in " +
                cache.root().string());
  }
  // Every artifact is made (and so checked) before the first file is written.
  std::vector<artifact> artifacts;
  for (const auto &e : entries) {
    artifacts.push_back(make_artifact(o.name, e, o.key_names));
  }
  json list = json::array();
  for (const auto &a : artifacts) {
    const auto path = store_artifact(out, a);
    if (o.json) {
      list.push_back(json{{"file", path.string()},
                          {"key", detail::to_json(a.key)},
                          {"config", detail::to_json(a.config)}});
    } else {
      std::cout << "wrote " << path.string() << "  " << a.key.to_string() << "  ["
                << a.config.to_string() << "]\n";
    }
  }
  if (o.json) {
    std::cout << list.dump(2) << "\n";
  } else {
    std::cout << artifacts.size() << (artifacts.size() == 1 ? " artifact" : " artifacts")
              << " written to " << out.string() << "\n";
  }
  return 0;
}

} // namespace tunekit::cli
