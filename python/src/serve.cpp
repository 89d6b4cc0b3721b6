/// \file serve.cpp
/// `tunekit._core.ServeWorker`: the collective serving worker (`tunekit::serve::worker`) over a
/// communicator written in Python (a `torch.distributed` group, an mpi4py communicator). Rank 0
/// serves HTTP; every rank runs the Python handler on the same requests in the same order.
///
/// `serve()` releases the GIL while it waits, so that other Python threads run (a client on rank
/// 0, the application's own); the handler and the communicator's collectives take it again. The
/// HTTP threads are C++ only and never touch Python.

#include "binding.hpp"

#include <tunekit/error.hpp>
#include <tunekit/serve.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <utility>

namespace tunekit::python {

namespace {

using namespace nb::literals;

// The handler's answer: a response, a (status, body[, content_type]) tuple, or bytes / str (200).
serve::response to_response(const nb::object &out) {
  serve::response r;
  nb::object body = out;
  if (nb::isinstance<nb::tuple>(out)) {
    const auto t = nb::borrow<nb::tuple>(out);
    if (t.size() < 2 || t.size() > 3) {
      throw error("serve handler: a tuple answer is (status, body) or (status, body, "
                  "content_type), not " +
                  std::to_string(t.size()) + " values");
    }
    r.status = nb::cast<int>(t[0]);
    body = t[1];
    if (t.size() == 3) {
      r.content_type = nb::cast<std::string>(t[2]);
    }
  }
  if (nb::isinstance<nb::bytes>(body)) {
    const auto b = nb::borrow<nb::bytes>(body);
    r.body.assign(b.c_str(), b.size());
  } else if (nb::isinstance<nb::str>(body)) {
    r.body = nb::cast<std::string>(body);
    if (!nb::isinstance<nb::tuple>(out) || nb::borrow<nb::tuple>(out).size() < 3) {
      r.content_type = "text/plain; charset=utf-8";
    }
  } else {
    throw error("serve handler: the body is a '" + py_type_name(body) + "', not bytes or str");
  }
  return r;
}

class py_worker {
public:
  py_worker(const nb::object &comm, nb::object handler, const std::string &host, int port,
            std::size_t max_request_bytes, std::size_t max_queued, int http_threads,
            double heartbeat_s, bool stop_endpoint, bool catch_sigterm)
      : m_handler(std::move(handler)) {
    if (!comm.is_none()) {
      m_comm = make_communicator(comm);
    } else {
      m_comm = std::make_unique<single_process_communicator>();
    }
    serve::options o;
    o.host = host;
    o.port = port;
    o.max_request_bytes = max_request_bytes;
    o.max_queued = max_queued;
    o.http_threads = http_threads;
    o.heartbeat = std::chrono::milliseconds(static_cast<long long>(heartbeat_s * 1000.0));
    o.stop_endpoint = stop_endpoint;
    o.catch_sigterm = catch_sigterm;
    auto fn = [this](const serve::request &r) {
      const nb::gil_scoped_acquire gil;
      try {
        nb::object out = m_handler(r.sequence, nb::str(r.path.data(), r.path.size()),
                                   nb::bytes(r.body.data(), r.body.size()));
        return to_response(out);
      } catch (nb::python_error &e) {
        // The exception's type and message (not its traceback), which rank 0's answer names.
        throw error(nb::cast<std::string>(nb::str(e.type().attr("__name__"))) + ": " +
                    nb::cast<std::string>(nb::str(e.value())));
      }
    };
    m_worker = std::make_unique<serve::worker>(*m_comm, fn, o);
  }

  nb::dict run() {
    serve::summary s;
    {
      const nb::gil_scoped_release nogil;
      s = m_worker->serve();
    }
    nb::dict d;
    d["reason"] = serve::to_string(s.reason);
    d["requests"] = s.requests;
    d["failed"] = s.failed;
    d["error"] = text_to_py(s.error);
    return d;
  }

  [[nodiscard]] int port() const { return m_worker->port(); }
  void stop() { m_worker->stop(); }

private:
  nb::object m_handler;
  std::unique_ptr<communicator> m_comm;
  std::unique_ptr<serve::worker> m_worker;
};

} // namespace

void bind_serve(nb::module_ &m) {
  nb::class_<py_worker>(m, "ServeWorker",
                        "The collective serving worker of one rank (tunekit::serve::worker).")
      .def(nb::init<const nb::object &, nb::object, const std::string &, int, std::size_t,
                    std::size_t, int, double, bool, bool>(),
           "comm"_a.none(), "handler"_a, "host"_a = "127.0.0.1", "port"_a = 0,
           "max_request_bytes"_a = std::size_t{16} << 20, "max_queued"_a = 1024,
           "http_threads"_a = 16, "heartbeat_s"_a = 1.0, "stop_endpoint"_a = true,
           "catch_sigterm"_a = true)
      .def("serve", &py_worker::run)
      .def_prop_ro("port", &py_worker::port)
      .def("stop", &py_worker::stop);
}

} // namespace tunekit::python
