// Reading tensors from a .safetensors file (memory-mapped): an 8-byte little-endian header
// length, a JSON header naming each tensor's dtype, shape and byte range, then the data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace novelty::encoder {

struct TensorInfo {
    std::string dtype;                  ///< "F32", "F16", "BF16", "I64", ...
    std::vector<std::size_t> shape;
    std::size_t begin = 0, end = 0;     ///< byte range within the data section
};

class SafeTensors {
public:
    /// Maps `path`; throws InputError naming the file for a bad header or out-of-range tensors.
    static SafeTensors open(const std::string& path);
    SafeTensors(SafeTensors&&) noexcept;
    ~SafeTensors();

    bool has(const std::string& name) const;
    const TensorInfo& info(const std::string& name) const;
    /// The tensor as float32 (F32 copied, F16 and BF16 converted), checking its shape; throws
    /// InputError naming the file and tensor when it is missing or has another shape.
    std::vector<float> floats(const std::string& name, const std::vector<std::size_t>& shape) const;
    const std::string& path() const;

private:
    struct Impl;
    explicit SafeTensors(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

}  // namespace novelty::encoder
