// The emulated device's memory, streams, events and copies (emulated_device.hpp).
#include "device/emulated/emulated_device.hpp"

#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include "novelty/util/error.hpp"
#include "novelty/util/half.hpp"
#include "util/bf16_gemm.hpp"

namespace novelty::dev::emulated {

namespace {

/// The token a stream or event handle points at (never dereferenced).
struct Token {
    int unused = 0;
};

}  // namespace

float load_value(const void* values, Element type, std::size_t i) {
    switch (type) {
        case Element::f32: return static_cast<const float*>(values)[i];
        case Element::f16: return half_to_float(static_cast<const std::uint16_t*>(values)[i]);
        case Element::bf16: return from_bf16(static_cast<const std::uint16_t*>(values)[i]);
    }
    throw Error("emulated device: unknown element type");
}

void store_value(void* values, Element type, std::size_t i, float v) {
    switch (type) {
        case Element::f32: static_cast<float*>(values)[i] = v; return;
        case Element::f16: static_cast<std::uint16_t*>(values)[i] = float_to_half(v); return;
        case Element::bf16: static_cast<std::uint16_t*>(values)[i] = to_bf16(v); return;
    }
    throw Error("emulated device: unknown element type");
}

void load_values(const void* values, Element type, std::size_t n, float* out) {
    const auto* bits = static_cast<const std::uint16_t*>(values);
    switch (type) {
        case Element::f32: std::memcpy(out, values, n * sizeof(float)); return;
        case Element::f16: for (std::size_t i = 0; i < n; ++i) out[i] = half_to_float(bits[i]); return;
        case Element::bf16: for (std::size_t i = 0; i < n; ++i) out[i] = from_bf16(bits[i]); return;
    }
    throw Error("emulated device: unknown element type");
}

void store_values(void* values, Element type, std::size_t n, const float* in) {
    auto* bits = static_cast<std::uint16_t*>(values);
    switch (type) {
        case Element::f32: std::memcpy(values, in, n * sizeof(float)); return;
        case Element::f16: for (std::size_t i = 0; i < n; ++i) bits[i] = float_to_half(in[i]); return;
        case Element::bf16: for (std::size_t i = 0; i < n; ++i) bits[i] = to_bf16(in[i]); return;
    }
    throw Error("emulated device: unknown element type");
}

void EmulatedDevice::set_current(int device) {
    if (device != 0) throw UsageError("the emulated CUDA device has one device (0), not " + std::to_string(device));
}

void EmulatedDevice::memory_info(std::size_t& free_bytes, std::size_t& total_bytes) {
    total_bytes = memory_.limit();
    free_bytes = memory_.limit() - memory_.used();
}

void* EmulatedDevice::allocate_pinned(std::size_t bytes) {
    void* ptr = std::malloc(bytes == 0 ? 1 : bytes);
    if (ptr == nullptr) throw std::bad_alloc();
    return ptr;
}

void EmulatedDevice::release_pinned(void* ptr) noexcept { std::free(ptr); }

Stream EmulatedDevice::make_stream() { return reinterpret_cast<Stream>(new Token()); }
void EmulatedDevice::destroy(Stream stream) noexcept { delete reinterpret_cast<Token*>(stream); }
Event EmulatedDevice::make_event(bool) { return reinterpret_cast<Event>(new Token()); }
void EmulatedDevice::destroy(Event event) noexcept { delete reinterpret_cast<Token*>(event); }

void EmulatedDevice::copy(void* dst, const void* src, std::size_t bytes, Copy kind, Stream) {
    if (bytes == 0) return;
    if (kind != Copy::host_to_device) check(src, bytes, "the copy's source");
    if (kind != Copy::device_to_host) check(dst, bytes, "the copy's destination");
    std::memmove(dst, src, bytes);
}

void EmulatedDevice::copy_2d(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch,
                             std::size_t row_bytes, std::size_t rows, Copy kind, Stream stream) {
    if (rows == 0 || row_bytes == 0) return;
    if (row_bytes > dst_pitch || row_bytes > src_pitch)
        throw Error("emulated device: a 2D copy's rows are wider than its pitch");
    for (std::size_t r = 0; r < rows; ++r)
        copy(static_cast<unsigned char*>(dst) + r * dst_pitch, static_cast<const unsigned char*>(src) + r * src_pitch,
             row_bytes, kind, stream);
}

void EmulatedDevice::fill_bytes(void* dst_d, int value, std::size_t bytes, Stream) {
    check(dst_d, bytes, "the fill's destination");
    std::memset(dst_d, value, bytes);
}

}  // namespace novelty::dev::emulated
