// `tunekit`: inspect and manage what tunekit keeps on disk (winner caches, offline artifacts,
// lookup tables, compiled kernels) and report this machine's devices. See docs/cli.md. This file
// only wires CLI11 to the subcommands (commands.hpp); each subcommand has its own options struct.
//
// Exit codes (docs/cli.md): 0 success; 1 something checked is bad (a cache entry, an artifact, a
// table, a compiled kernel, a file to import); 2 an error (a missing directory or file, nothing to
// export, an unwritable file); CLI11's codes for usage errors (105 a value that fails its check,
// 106 a missing subcommand or required option, 109 an unknown command or argument).

#include "commands.hpp"

#include <CLI/CLI.hpp>

#include <charconv>
#include <functional>
#include <iostream>
#include <string>
#include <system_error>

namespace {

using namespace tunekit::cli;

// A check of a number option with a message that says what it takes (CLI11's Range prints its
// bounds as doubles): `integer`, a whole number; else any number; at least `least`.
CLI::Validator at_least(int least, bool integer, const std::string &what) {
  return CLI::Validator(
      [=](std::string &text) -> std::string {
        const char *end = text.data() + text.size();
        bool ok = false;
        if (integer) {
          long long v = 0;
          const auto [ptr, ec] = std::from_chars(text.data(), end, v);
          ok = ec == std::errc() && ptr == end && v >= least;
        } else {
          double v = 0;
          const auto [ptr, ec] = std::from_chars(text.data(), end, v);
          ok = ec == std::errc() && ptr == end && v >= least;
        }
        return ok ? std::string() : "expected " + what + ", not '" + text + "'";
      },
      (integer ? "INT>=" : "NUMBER>=") + std::to_string(least));
}

void json_flag(CLI::App *sub, bool &json) {
  sub->add_flag("--json", json, "machine-readable JSON on stdout");
}

// `cache list|show|clear`, which share their options.
void add_cache(CLI::App &app, const global_options &g, cache_options &o, int &rc) {
  auto *cache = app.add_subcommand("cache", "winner cache entries")->require_subcommand(1);
  const auto add = [&](const char *name, const char *help,
                       int (*run)(const global_options &, const cache_options &)) {
    auto *sub = cache->add_subcommand(name, help);
    sub->add_option("--function", o.function, "only this function's entries");
    json_flag(sub, o.json);
    sub->callback([&g, &o, &rc, run] { rc = run(g, o); });
  };
  add("list", "one line per entry", cache_list);
  add("show", "every entry with its candidates", cache_show);
  add("clear", "remove entries and their logs", cache_clear);
  cache->get_subcommand("list")->add_flag(
      "--long", o.long_lines, "every field on each line (with the hardware and the path), uncut");
}

// `cache import kernel-tuner` and `cache export kernel-tuner` (kernel_tuner_cmd.cpp).
void add_cache_kernel_tuner(CLI::App &cache, const global_options &g,
                            kernel_tuner_import_options &in, kernel_tuner_export_options &out,
                            int &rc) {
  const char *cache_dir_help = "winner cache directory (as --cache-dir before the command)";
  auto *imp =
      cache.add_subcommand("import", "entries from other tuners' files")->require_subcommand(1);
  auto *i = imp->add_subcommand("kernel-tuner", "one entry from a Kernel Tuner cache file");
  i->add_option("FILE", in.file, "Kernel Tuner cache file (.json, or gzip-compressed)")->required();
  i->add_option("--function", in.function, "the tuned function the entry belongs to")->required();
  i->add_option("--version", in.version, "the function's version (default: empty)");
  i->add_option("--key", in.key, "the entry's key as a JSON array (default: problem_size)");
  i->add_option("--cache-dir", in.cache_dir, cache_dir_help);
  i->callback([&g, &in, &rc] { rc = cache_import_kernel_tuner(g, in); });

  auto *exp =
      cache.add_subcommand("export", "entries as other tuners' files")->require_subcommand(1);
  auto *e = exp->add_subcommand("kernel-tuner", "entries as Kernel Tuner cache files");
  e->add_option("--function", out.function, "the tuned function whose entries to export")
      ->required();
  e->add_option("--version", out.version, "only entries of this function version");
  e->add_option("--key", out.key, "only the entry of this key (a JSON array); --out is a file");
  e->add_option("--out", out.out, "output file (with --key), else folder (one file per entry)")
      ->required();
  e->add_option("--cache-dir", out.cache_dir, cache_dir_help);
  e->callback([&g, &out, &rc] { rc = cache_export_kernel_tuner(g, out); });
}

// `cache import kernel-launcher` and `cache export kernel-launcher` (kernel_launcher_cmd.cpp),
// beside the Kernel Tuner ones under `cache import` and `cache export`.
void add_cache_kernel_launcher(CLI::App &cache, const global_options &g,
                               kernel_launcher_import_options &in,
                               kernel_launcher_export_options &out, int &rc) {
  const char *cache_dir_help = "winner cache directory (as --cache-dir before the command)";
  auto *i = cache.get_subcommand("import")->add_subcommand(
      "kernel-launcher", "entries (one per device and problem size) from a kernel_launcher "
                         "wisdom file");
  i->add_option("FILE", in.file, "kernel_launcher wisdom file (<tuning key>.wisdom)")->required();
  i->add_option("--function", in.function, "the tuned function the entries belong to")->required();
  i->add_option("--version", in.version, "the function's version (default: empty)");
  i->add_option("--key", in.keys,
                "SIZE=KEY: the key (a JSON array) of problem size SIZE (a JSON array); KEY alone: "
                "of the file's one problem size (repeatable; default: the problem size)")
      ->allow_extra_args(false);
  i->add_option("--cache-dir", in.cache_dir, cache_dir_help);
  i->callback([&g, &in, &rc] { rc = cache_import_kernel_launcher(g, in); });

  auto *e = cache.get_subcommand("export")->add_subcommand(
      "kernel-launcher", "a function's entries as one kernel_launcher wisdom file");
  e->add_option("--function", out.function, "the tuned function whose entries to export")
      ->required();
  e->add_option("--version", out.version, "only entries of this function version");
  e->add_option("--tuning-key", out.tuning_key,
                "the kernel's tuning key, written into the file (default: the function name)");
  e->add_option("--problem-size", out.problem_sizes,
                "KEY=SIZE: write the entry of key KEY (a JSON array) with problem size SIZE "
                "(repeatable; needed for keys that are not 1 to 3 ints)")
      ->allow_extra_args(false);
  e->add_option("--out", out.out, "output file, or a folder to write <tuning key>.wisdom into")
      ->required();
  e->add_option("--cache-dir", out.cache_dir, cache_dir_help);
  e->callback([&g, &out, &rc] { rc = cache_export_kernel_launcher(g, out); });
}

void add_artifact(CLI::App &app, const global_options &g, artifact_check_options &check,
                  artifact_emit_options &emit, int &rc) {
  auto *art = app.add_subcommand("artifact", "offline artifacts")->require_subcommand(1);
  auto *c = art->add_subcommand("check", "validate every artifact of a directory");
  c->add_option("DIR", check.dir, "artifact directory")->required();
  json_flag(c, check.json);
  c->callback([&] { rc = artifact_check(check); });

  auto *e = art->add_subcommand("emit", "write artifacts from winner cache entries");
  e->add_option("--name", emit.name, "artifact name (the tuner's artifact.name)")->required();
  e->add_option("--function", emit.function, "the tuned function whose entries to emit")
      ->required();
  e->add_option("--version", emit.version, "only entries of this function version");
  e->add_option("--out", emit.out, "artifact directory (default: $TUNEKIT_ARTIFACT_DIR)");
  e->add_option("--key-names", emit.key_names,
                "names of the key's values, recorded in the files (one per value)")
      ->delimiter(',');
  json_flag(e, emit.json);
  e->callback([&] { rc = artifact_emit(g, emit); });
}

void add_table(CLI::App &app, const global_options &g, table_check_options &check,
               table_export_options &out, int &rc) {
  auto *table = app.add_subcommand("table", "lookup tables")->require_subcommand(1);
  auto *c = table->add_subcommand(
      "check", "validate a lookup table file (tunekit's or PyTorch Inductor's key format)");
  c->add_option("FILE", check.file, "lookup table")->required();
  json_flag(c, check.json);
  c->callback([&] { rc = table_check(check); });

  auto *e =
      table->add_subcommand("export", "write a lookup table (device-specific keys) from the cache");
  e->add_option("--function", out.function, "only this function's entries");
  e->add_option("--version", out.version, "only entries of this function version");
  e->add_option("--op", out.op, "op name ending each key (default: the function name)");
  e->add_option("--top-k", out.top_k, "keep the k fastest valid choices per key")
      ->capture_default_str()
      ->check(at_least(1, true, "a whole number of choices, at least 1"));
  e->add_option("--template-hash", out.template_hashes,
                "TEMPLATE_ID=HASH: record HASH with that template's choices (repeatable; "
                "a template no exported choice has is an error)");
  e->add_option("--key-format", out.key_format,
                "how input keys and params are written: tunekit's text, or PyTorch Inductor's "
                "(a key of one string value is the input key as it stands)")
      ->capture_default_str()
      ->check(CLI::IsMember({"tunekit", "inductor"}));
  e->add_option("--out", out.out, "output file (default: stdout)");
  e->callback([&] { rc = table_export(g, out); });
}

#ifdef TUNEKIT_CLI_KERNELS
// `kernels list|clear`: the compile cache of runtime-compiled kernels (cuda backend only).
void add_kernels(CLI::App &app, const global_options &g, kernels_options &o, int &rc) {
  auto *kernels =
      app.add_subcommand("kernels", "compiled kernels of the compile cache")->require_subcommand(1);
  auto *list = kernels->add_subcommand("list", "one line per compiled kernel, BAD for a bad file");
  json_flag(list, o.json);
  list->callback([&] { rc = kernels_list(g, o); });
  auto *clear = kernels->add_subcommand("clear", "remove compiled kernels");
  clear
      ->add_option("--older-than", o.older_than_days,
                   "only those written more than DAYS days ago (fractions allowed)")
      ->option_text("DAYS")
      ->check(at_least(0, false, "a number of days, 0 or more"));
  json_flag(clear, o.json);
  clear->callback([&] { rc = kernels_clear(g, o); });
}
#endif

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"tunekit: inspect winner caches, offline artifacts, lookup tables and devices"};
  app.require_subcommand(1);
  int rc = 0;

  global_options global;
  app.add_option("--cache-dir", global.cache_dir,
                 "winner cache directory (default: $TUNEKIT_CACHE_DIR, else the user cache)");

  cache_options cache;
  add_cache(app, global, cache, rc);
  kernel_tuner_import_options kt_import;
  kernel_tuner_export_options kt_export;
  add_cache_kernel_tuner(*app.get_subcommand("cache"), global, kt_import, kt_export, rc);
  kernel_launcher_import_options kl_import;
  kernel_launcher_export_options kl_export;
  add_cache_kernel_launcher(*app.get_subcommand("cache"), global, kl_import, kl_export, rc);

  artifact_check_options artifact_check;
  artifact_emit_options artifact_emit;
  add_artifact(app, global, artifact_check, artifact_emit, rc);

  table_check_options table_check;
  table_export_options table_export;
  add_table(app, global, table_check, table_export, rc);

#ifdef TUNEKIT_CLI_KERNELS
  kernels_options kernels;
  add_kernels(app, global, kernels, rc);
#endif

  report_options rep;
  auto *r = app.add_subcommand("report", "an HTML report of the winner cache (needs the Python "
                                         "package; see docs/report.md)");
  r->add_option("--function", rep.functions, "only this function's entries (repeatable)");
  r->add_option("-o,--out", rep.out, "output file")->capture_default_str();
  r->add_option("--flop", rep.flop,
                "[NAME=]EXPR: floating-point operations of one call, from the key's values "
                "k0, k1, ... (repeatable; GFLOP/s in the page)");
  r->add_option("--bytes", rep.bytes,
                "[NAME=]EXPR: bytes one call moves (repeatable; GB/s in the page)");
  r->callback([&] { rc = report(global, rep); });

  device_options dev;
  auto *d = app.add_subcommand("device", "identity and hardware digest of this machine");
  json_flag(d, dev.json);
  d->callback([&] { rc = device(dev); });

  try {
    app.parse(argc, argv);
  } catch (const CLI::RequiredError &e) {
    // CLI11 reports an unknown command as a missing one ("A subcommand is required"): name it.
    const auto extra = app.remaining(true);
    if (!extra.empty() && std::string(e.what()).find("subcommand") != std::string::npos) {
      return app.exit(CLI::ExtrasError(extra));
    }
    return app.exit(e);
  } catch (const CLI::ParseError &e) {
    return app.exit(e);
  } catch (const std::exception &e) {
    std::cerr << "tunekit: error: " << e.what() << "\n";
    return 2;
  }
  return rc;
}
