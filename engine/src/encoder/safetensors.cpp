#include "encoder/safetensors.hpp"

#include "io/json/json_parse.hpp"

#include "novelty/util/error.hpp"
#include "novelty/util/half.hpp"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace novelty::encoder {

struct SafeTensors::Impl {
    std::string path;
    const unsigned char* map = nullptr;
    std::size_t map_size = 0;
    const unsigned char* data = nullptr;
    std::size_t data_size = 0;
    std::map<std::string, TensorInfo> tensors;
    ~Impl() {
        if (map) ::munmap(const_cast<unsigned char*>(map), map_size);
    }
};

SafeTensors::SafeTensors(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SafeTensors::SafeTensors(SafeTensors&&) noexcept = default;
SafeTensors::~SafeTensors() = default;

SafeTensors SafeTensors::open(const std::string& path) {
    auto impl = std::make_unique<Impl>();
    impl->path = path;
    const int fd = ::open(path.c_str(), O_RDONLY);
    if (fd < 0) throw InputError(path, 0, std::string("cannot open: ") + std::strerror(errno));
    struct stat st{};
    ::fstat(fd, &st);
    impl->map_size = static_cast<std::size_t>(st.st_size);
    if (impl->map_size < 8) {
        ::close(fd);
        throw InputError(path, 0, "too short to be a safetensors file");
    }
    void* map = ::mmap(nullptr, impl->map_size, PROT_READ, MAP_PRIVATE, fd, 0);
    ::close(fd);
    if (map == MAP_FAILED) throw Error(path + ": cannot map: " + std::strerror(errno));
    impl->map = static_cast<const unsigned char*>(map);
    std::uint64_t header_size = 0;
    for (int i = 7; i >= 0; --i) header_size = (header_size << 8) | impl->map[i];
    if (header_size > impl->map_size - 8) throw InputError(path, 0, "header length runs past the end of the file");
    nlohmann::json header;
    try {
        header = parse_json(std::string_view(reinterpret_cast<const char*>(impl->map) + 8, header_size));
    } catch (const JsonError& e) {
        throw InputError(path, 0, std::string("invalid safetensors header: ") + e.what());
    }
    impl->data = impl->map + 8 + header_size;
    impl->data_size = impl->map_size - 8 - header_size;
    for (auto it = header.begin(); it != header.end(); ++it) {
        if (it.key() == "__metadata__") continue;
        TensorInfo info;
        try {
            info.dtype = it->at("dtype").get<std::string>();
            info.shape = it->at("shape").get<std::vector<std::size_t>>();
            const auto offsets = it->at("data_offsets").get<std::vector<std::size_t>>();
            if (offsets.size() != 2) throw std::runtime_error("data_offsets must have two entries");
            info.begin = offsets[0];
            info.end = offsets[1];
        } catch (const std::exception& e) {
            throw InputError(path, 0, "tensor '" + it.key() + "': " + e.what());
        }
        if (info.begin > info.end || info.end > impl->data_size)
            throw InputError(path, 0, "tensor '" + it.key() + "' lies outside the file");
        impl->tensors.emplace(it.key(), info);
    }
    return SafeTensors(std::move(impl));
}

bool SafeTensors::has(const std::string& name) const { return impl_->tensors.count(name) > 0; }

const TensorInfo& SafeTensors::info(const std::string& name) const {
    auto it = impl_->tensors.find(name);
    if (it == impl_->tensors.end()) throw InputError(impl_->path, 0, "tensor '" + name + "' is missing");
    return it->second;
}

const std::string& SafeTensors::path() const { return impl_->path; }

std::vector<float> SafeTensors::floats(const std::string& name, const std::vector<std::size_t>& shape) const {
    const TensorInfo& t = info(name);
    if (t.shape != shape) {
        auto text = [](const std::vector<std::size_t>& s) {
            std::string out = "[";
            for (std::size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
            return out + "]";
        };
        throw InputError(impl_->path, 0, "tensor '" + name + "' has shape " + text(t.shape) + ", expected " + text(shape));
    }
    std::size_t n = 1;
    for (std::size_t d : shape) n *= d;
    std::vector<float> out(n);
    const unsigned char* src = impl_->data + t.begin;
    const std::size_t bytes = t.end - t.begin;
    if (t.dtype == "F32" && bytes == n * 4) {
        std::memcpy(out.data(), src, bytes);
    } else if (t.dtype == "F16" && bytes == n * 2) {
        for (std::size_t i = 0; i < n; ++i) {
            std::uint16_t h;
            std::memcpy(&h, src + 2 * i, 2);
            out[i] = half_to_float(h);
        }
    } else if (t.dtype == "BF16" && bytes == n * 2) {
        for (std::size_t i = 0; i < n; ++i) {
            std::uint16_t h;
            std::memcpy(&h, src + 2 * i, 2);
            const std::uint32_t bits = static_cast<std::uint32_t>(h) << 16;
            std::memcpy(&out[i], &bits, 4);
        }
    } else {
        throw InputError(impl_->path, 0, "tensor '" + name + "' has dtype " + t.dtype + " and " + std::to_string(bytes) +
                                             " bytes; expected F32, F16 or BF16 data for " + std::to_string(n) + " values");
    }
    return out;
}

}  // namespace novelty::encoder
