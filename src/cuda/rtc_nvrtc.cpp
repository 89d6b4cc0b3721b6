// NVRTC, in this process or in a compile worker process (`tunekit-cuda-worker --compile`).
//
// Compile worker protocol (one line each way, see tunekit::detail::child_process, src/core/os.hpp):
//   request: {"source_name": ..., "source": ..., "headers": [[name, text], ...],
//             "options": [...], "name_expression": ..., "cubin": true|false,
//             "description": ..., "target": ..., "out": "<file for the binary>"}
//   reply:   {"lowered_name": ..., "bytes": N}   the binary is in "out"
//        or  {"error": "<the first lines of NVRTC's log>"}
// The binary travels through a file the parent names and removes, not through the pipe.

#include "rtc_nvrtc.hpp"

#include "../core/os.hpp"

#include <tunekit/error.hpp>

#include <nlohmann/json.hpp>

#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

namespace tunekit::cuda::rtc_detail {

void check_nvrtc(nvrtcResult r, std::string_view context) {
  if (r != NVRTC_SUCCESS) {
    throw error(std::string(context) + ": " + nvrtcGetErrorString(r));
  }
}

// The first `max_lines` non-blank lines of an NVRTC log.
std::string first_lines(std::string_view log, std::size_t max_lines) {
  std::string out;
  std::size_t lines = 0;
  std::size_t pos = 0;
  while (pos < log.size() && lines < max_lines) {
    auto eol = log.find('\n', pos);
    if (eol == std::string_view::npos) {
      eol = log.size();
    }
    const auto line = log.substr(pos, eol - pos);
    if (line.find_first_not_of(" \t\r") != std::string_view::npos) {
      if (!out.empty()) {
        out += '\n';
      }
      out.append(line);
      ++lines;
    }
    pos = eol + 1;
  }
  return out;
}

namespace {

// One NVRTC program, destroyed with the object.
class nvrtc_program {
public:
  explicit nvrtc_program(const nvrtc_source &source) {
    std::vector<const char *> names;
    std::vector<const char *> texts;
    for (const auto &[name, text] : source.headers) {
      names.push_back(name.c_str());
      texts.push_back(text.c_str());
    }
    check_nvrtc(nvrtcCreateProgram(&m_prog, source.text.c_str(), source.name.c_str(),
                                   static_cast<int>(source.headers.size()), texts.data(),
                                   names.data()),
                "nvrtcCreateProgram(" + source.name + ")");
  }
  nvrtc_program(const nvrtc_program &) = delete;
  nvrtc_program &operator=(const nvrtc_program &) = delete;
  ~nvrtc_program() { static_cast<void>(nvrtcDestroyProgram(&m_prog)); }
  [[nodiscard]] nvrtcProgram get() const noexcept { return m_prog; }

  [[nodiscard]] std::string log() const {
    std::size_t size = 0;
    if (nvrtcGetProgramLogSize(m_prog, &size) != NVRTC_SUCCESS || size == 0) {
      return {};
    }
    std::string text(size, '\0');
    if (nvrtcGetProgramLog(m_prog, text.data()) != NVRTC_SUCCESS) {
      return {};
    }
    while (!text.empty() && (text.back() == '\0' || text.back() == '\n')) {
      text.pop_back();
    }
    return text;
  }

private:
  nvrtcProgram m_prog = nullptr;
};

} // namespace

nvrtc_output run_nvrtc(const nvrtc_source &source, const nvrtc_job &job) {
  nvrtc_program prog(source);
  const std::string &name_expression = job.name_expression;
  check_nvrtc(nvrtcAddNameExpression(prog.get(), name_expression.c_str()),
              "nvrtcAddNameExpression(" + name_expression + ")");
  std::vector<const char *> opts;
  opts.reserve(job.options.size());
  for (const auto &o : job.options) {
    opts.push_back(o.c_str());
  }
  const nvrtcResult r = nvrtcCompileProgram(prog.get(), static_cast<int>(opts.size()), opts.data());
  if (r != NVRTC_SUCCESS) {
    const std::string log = prog.log();
    std::string msg = first_lines(log, 8);
    if (!msg.empty()) {
      msg += '\n';
    }
    msg += "(" + std::string(nvrtcGetErrorString(r)) + " compiling " + job.description + " for " +
           job.target + ")";
    throw error(msg);
  }
  nvrtc_output out;
  const char *lowered = nullptr;
  check_nvrtc(nvrtcGetLoweredName(prog.get(), name_expression.c_str(), &lowered),
              "nvrtcGetLoweredName(" + name_expression + ")");
  out.lowered_name = lowered;
  std::size_t size = 0;
  if (job.cubin) {
    check_nvrtc(nvrtcGetCUBINSize(prog.get(), &size), "nvrtcGetCUBINSize");
    out.binary.resize(size);
    check_nvrtc(nvrtcGetCUBIN(prog.get(), out.binary.data()), "nvrtcGetCUBIN");
  } else {
    check_nvrtc(nvrtcGetPTXSize(prog.get(), &size), "nvrtcGetPTXSize");
    out.binary.resize(size);
    check_nvrtc(nvrtcGetPTX(prog.get(), out.binary.data()), "nvrtcGetPTX");
  }
  return out;
}

namespace {

std::string read_binary(const std::filesystem::path &path) {
  std::string why;
  auto data = tunekit::detail::read_file(path, &why);
  if (!data) {
    throw error("compile worker: its output " + path.string() + " " + why);
  }
  return std::move(*data);
}

} // namespace

nvrtc_output compile_in_worker(tunekit::detail::child_process &worker, const nvrtc_source &source,
                               const nvrtc_job &job, const std::filesystem::path &out,
                               std::chrono::milliseconds deadline) {
  nlohmann::json headers = nlohmann::json::array();
  for (const auto &[name, text] : source.headers) {
    headers.push_back({name, text});
  }
  const nlohmann::json request = {
      {"source_name", source.name},
      {"source", source.text},
      {"headers", headers},
      {"options", job.options},
      {"name_expression", job.name_expression},
      {"cubin", job.cubin},
      {"description", job.description},
      {"target", job.target},
      {"out", out.string()},
  };
  std::string reply_text;
  try {
    reply_text = worker.request(
        request.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), deadline);
  } catch (const error &e) {
    std::error_code ec;
    std::filesystem::remove(out, ec);
    throw error("compile worker, compiling " + job.description + " for " + job.target + ": " +
                e.what());
  }
  nlohmann::json reply;
  try {
    reply = nlohmann::json::parse(reply_text);
  } catch (const nlohmann::json::exception &e) {
    throw error("compile worker: unreadable reply (" + std::string(e.what()) + ")");
  }
  if (const auto it = reply.find("error"); it != reply.end()) {
    throw error(it->is_string() ? it->get<std::string>() : it->dump());
  }
  const auto name = reply.find("lowered_name");
  if (name == reply.end() || !name->is_string()) {
    throw error("compile worker: reply without lowered_name: " + reply_text.substr(0, 200));
  }
  nvrtc_output result;
  result.lowered_name = name->get<std::string>();
  result.binary = read_binary(out);
  std::error_code ec;
  std::filesystem::remove(out, ec);
  const auto bytes = reply.find("bytes");
  if (bytes == reply.end() || !bytes->is_number_unsigned() ||
      bytes->get<std::size_t>() != result.binary.size()) {
    throw error("compile worker: the binary of " + job.description + " in " + out.string() +
                " is not the size the worker reported");
  }
  return result;
}

int serve_compiles(std::istream &in, std::ostream &out) {
  std::string line;
  while (std::getline(in, line)) {
    nlohmann::json reply;
    try {
      const auto r = nlohmann::json::parse(line);
      nvrtc_source source{
          r.at("source_name").get<std::string>(), r.at("source").get<std::string>(), {}};
      for (const auto &h : r.at("headers")) {
        source.headers.emplace_back(h.at(0).get<std::string>(), h.at(1).get<std::string>());
      }
      const nvrtc_job job{r.at("options").get<std::vector<std::string>>(),
                          r.at("name_expression").get<std::string>(), r.at("cubin").get<bool>(),
                          r.at("description").get<std::string>(),
                          r.at("target").get<std::string>()};
      const auto result = run_nvrtc(source, job);
      const std::filesystem::path path = r.at("out").get<std::string>();
      {
        std::ofstream file(path, std::ios::binary | std::ios::trunc);
        file.write(result.binary.data(), static_cast<std::streamsize>(result.binary.size()));
        if (!file.flush()) {
          throw error("cannot write " + path.string());
        }
      }
      reply = {{"lowered_name", result.lowered_name}, {"bytes", result.binary.size()}};
    } catch (const std::exception &e) {
      reply = {{"error", e.what()}};
    }
    out << reply.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n'
        << std::flush;
  }
  return 0;
}

} // namespace tunekit::cuda::rtc_detail
