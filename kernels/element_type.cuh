// Element types of vectors on the device. Shared by the kernels and the CUDA backend glue;
// host code only names them, it never does arithmetic on 16-bit values here.
#pragma once

namespace novelty::kernels {

/// How a device matrix stores its values: IEEE float32, IEEE binary16, or bfloat16.
enum class Element : int { f32 = 0, f16 = 1, bf16 = 2 };

/// Bytes per value of `type`.
inline constexpr int element_bytes(Element type) { return type == Element::f32 ? 4 : 2; }

}  // namespace novelty::kernels
