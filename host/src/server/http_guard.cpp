#include "server/http_guard.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace novelty::host::detail {

namespace {

using Clock = std::chrono::steady_clock;

// A connection's socket as cpp-httplib's Stream, reading through a small buffer (the library
// reads request lines a byte at a time) and refusing to wait past the current deadline.
class DeadlineStream : public httplib::Stream {
public:
    DeadlineStream(socket_t sock, std::chrono::milliseconds io_timeout) : sock_(sock), io_timeout_(io_timeout) {}

    void begin_headers(Clock::time_point deadline, std::size_t max_bytes) {
        deadline_ = deadline;
        header_budget_ = max_bytes;
        in_headers_ = true;
    }
    void begin_body(Clock::time_point deadline) {
        deadline_ = deadline;
        in_headers_ = false;
    }
    bool timed_out() const { return timed_out_; }
    bool has_buffered() const { return pos_ < len_; }
    bool must_close = false;

    bool is_readable() const override { return has_buffered() || wait(POLLIN, remaining()) > 0; }
    bool is_writable() const override { return wait(POLLOUT, io_timeout_) > 0; }

    ssize_t read(char* ptr, std::size_t size) override {
        if (!has_buffered()) {
            // Past the deadline, only bytes that have already arrived are taken.
            const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline_ - Clock::now());
            if (wait(POLLIN, std::clamp(left, std::chrono::milliseconds(0), io_timeout_)) <= 0) {
                if (left <= io_timeout_) timed_out_ = true;  // the deadline, not the idle limit, ended the wait
                return -1;
            }
            ssize_t got;
            do got = ::recv(sock_, buffer_, sizeof buffer_, 0);
            while (got < 0 && errno == EINTR);
            if (got <= 0) return got;
            pos_ = 0;
            len_ = static_cast<std::size_t>(got);
        }
        std::size_t n = std::min(size, len_ - pos_);
        if (in_headers_) {
            if (header_budget_ == 0) return -1;  // headers longer than allowed
            n = std::min(n, header_budget_);
            header_budget_ -= n;
        }
        std::memcpy(ptr, buffer_ + pos_, n);
        pos_ += n;
        return static_cast<ssize_t>(n);
    }

    ssize_t write(const char* ptr, std::size_t size) override {
        if (!is_writable()) return -1;
        ssize_t sent;
        do sent = ::send(sock_, ptr, size, MSG_NOSIGNAL);
        while (sent < 0 && errno == EINTR);
        return sent;
    }

    void get_remote_ip_and_port(std::string& ip, int& port) const override { address(::getpeername, ip, port); }
    void get_local_ip_and_port(std::string& ip, int& port) const override { address(::getsockname, ip, port); }
    socket_t socket() const override { return sock_; }

private:
    std::chrono::milliseconds remaining() const {
        const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline_ - Clock::now());
        return std::clamp(left, std::chrono::milliseconds(0), io_timeout_);
    }
    int wait(short events, std::chrono::milliseconds timeout) const {
        pollfd p{sock_, events, 0};
        int ready;
        do ready = ::poll(&p, 1, static_cast<int>(std::max<long long>(0, timeout.count())));
        while (ready < 0 && errno == EINTR);
        return ready;
    }
    template <class Get>
    void address(Get get, std::string& ip, int& port) const {
        sockaddr_storage addr{};
        socklen_t len = sizeof addr;
        ip.clear();
        port = 0;
        if (get(sock_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return;
        char host[NI_MAXHOST], serv[NI_MAXSERV];
        if (::getnameinfo(reinterpret_cast<sockaddr*>(&addr), len, host, sizeof host, serv, sizeof serv,
                          NI_NUMERICHOST | NI_NUMERICSERV) == 0) {
            ip = host;
            port = std::atoi(serv);
        }
    }

    socket_t sock_;
    std::chrono::milliseconds io_timeout_;
    Clock::time_point deadline_ = Clock::now();
    std::size_t header_budget_ = 0;
    bool in_headers_ = true;
    bool timed_out_ = false;
    char buffer_[4096];
    std::size_t pos_ = 0, len_ = 0;
};

thread_local DeadlineStream* current_stream = nullptr;

}  // namespace

// cpp-httplib hands each accepted connection to its task queue on the accepting thread; this
// queue serves it right there (process_and_close_socket() only checks the limit and passes the
// connection on to the worker pool), and drains the pool on shutdown.
class GuardedHttpServer::WorkerQueue : public httplib::TaskQueue {
public:
    WorkerQueue(GuardedHttpServer& server, std::size_t workers) : server_(server), pool_(std::max<std::size_t>(1, workers)) {
        server_.queue_ = this;
    }
    ~WorkerQueue() override { server_.queue_ = nullptr; }
    void enqueue(std::function<void()> fn) override { fn(); }
    void shutdown() override { pool_.shutdown(); }
    httplib::ThreadPool& pool() { return pool_; }

private:
    GuardedHttpServer& server_;
    httplib::ThreadPool pool_;
};

GuardedHttpServer::GuardedHttpServer(ConnectionLimits limits) : limits_(limits) {
    new_task_queue = [this] { return new WorkerQueue(*this, limits_.workers); };
}

GuardedHttpServer::~GuardedHttpServer() = default;

void note_route(httplib::Server& http, const std::string& method, const std::string& pattern, const std::string& endpoint) {
    if (auto* guarded = dynamic_cast<GuardedHttpServer*>(&http)) guarded->note({method, pattern, endpoint});
}

ConnectionCounts GuardedHttpServer::counts() const { return {open_.load(), rejected_.load(), timed_out_.load()}; }

void GuardedHttpServer::close_after_reply() {
    if (current_stream) current_stream->must_close = true;
}

bool GuardedHttpServer::process_and_close_socket(socket_t sock) {
    if (!queue_ || open_.load() >= limits_.max_connections) {
        reject(sock);
        return true;
    }
    ++open_;
    const auto accepted = Clock::now();
    queue_->pool().enqueue([this, sock, accepted] {
        serve_connection(sock, accepted);
        --open_;
    });
    return true;
}

void GuardedHttpServer::reject(socket_t sock) {
    ++rejected_;
    static const std::string body = "{\"error\":\"too many connections are open; retry shortly\"}";
    const std::string reply = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\n"
                              "Connection: close\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
    (void)::send(sock, reply.data(), reply.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    char discard[4096];  // what the client sent already: closing with it unread would reset the reply
    (void)::recv(sock, discard, sizeof discard, MSG_DONTWAIT);
    ::shutdown(sock, SHUT_RDWR);
    ::close(sock);
}

void GuardedHttpServer::serve_connection(socket_t sock, Clock::time_point accepted) {
    const auto io_timeout = std::chrono::milliseconds(read_timeout_sec_ * 1000 + read_timeout_usec_ / 1000);
    DeadlineStream stream(sock, io_timeout);
    current_stream = &stream;
    const auto idle_timeout = std::chrono::milliseconds(keep_alive_timeout_sec_ * 1000);
    Clock::time_point start = accepted;
    for (std::size_t left = keep_alive_max_count_; left > 0 && !stopping(); --left) {
        // Wait for the request's first byte: the first request's wait counts against its header
        // deadline; later ones may idle for the keep-alive timeout. Wake up to notice stop().
        const auto wait_until = left == keep_alive_max_count_ ? accepted + limits_.header_timeout : Clock::now() + idle_timeout;
        pollfd arrived{sock, POLLIN, 0};
        bool ready = stream.has_buffered() || ::poll(&arrived, 1, 0) > 0;
        while (!ready && !stopping() && Clock::now() < wait_until) {
            pollfd p{sock, POLLIN, 0};
            const auto slice = std::min<long long>(
                100, std::chrono::duration_cast<std::chrono::milliseconds>(wait_until - Clock::now()).count() + 1);
            ready = ::poll(&p, 1, static_cast<int>(slice)) > 0;
        }
        if (!ready) break;
        if (left != keep_alive_max_count_) start = Clock::now();
        stream.begin_headers(start + limits_.header_timeout, limits_.max_header_bytes);
        bool closed = false;
        const bool ok = process_request(stream, left == 1 || stopping(), closed, [&](httplib::Request&) {
            stream.begin_body(Clock::now() + limits_.body_timeout);
        });
        if (stream.timed_out()) ++timed_out_;
        if (!ok || closed || stream.must_close || stream.timed_out()) break;
    }
    current_stream = nullptr;
    ::shutdown(sock, SHUT_RDWR);
    ::close(sock);
}

std::string read_body(const httplib::Request& req, const httplib::ContentReader& reader, std::size_t max_bytes) {
    std::string body;
    bool too_large = false;
    const bool complete = reader([&](const char* data, std::size_t n) {
        if (body.size() + n > max_bytes) {
            too_large = true;
            return false;
        }
        body.append(data, n);
        return true;
    });
    if (complete) return body;
    GuardedHttpServer::close_after_reply();  // the rest of the body is still on the connection
    const bool over_by_length = req.has_header("Content-Length") && req.get_header_value<std::uint64_t>("Content-Length") > max_bytes;
    if (too_large || over_by_length)
        throw HttpError(413, "the body is larger than the limit of " + std::to_string(max_bytes) +
                                 " bytes; send fewer records per request");
    if (current_stream && current_stream->timed_out())
        throw HttpError(408, "the body did not arrive in time");
    if (!req.has_header("Content-Length") && !req.has_header("Transfer-Encoding"))
        throw HttpError(400, "the request has no body: send the JSON object with a Content-Length (or chunked)");
    throw HttpError(400, "the body could not be read (cut off, or broken chunked encoding)");
}

}  // namespace novelty::host::detail
