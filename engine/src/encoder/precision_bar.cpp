#include "encoder/precision_bar.hpp"

#include "novelty/util/cpu_path.hpp"
#include "util/bf16_gemm.hpp"
#include "util/int8_gemm.hpp"

namespace novelty::encoder {

std::vector<std::string> precisions_fastest_first() {
    std::vector<std::string> order;
    if (int8_kernel_available()) order.push_back("int8");
    if (bf16_kernel_available()) order.push_back("bf16");
    order.push_back("f32");
    return order;
}

bool precision_meets_bar(const std::string& precision) {
    // bf16 and int8 keep the cosine bar (bf16 min 0.99998, int8 min 0.99937) but not the top-10
    // one: the demo ideas' 10th and 11th papers are as little as 0.00006 apart in float32, closer
    // than either moves a similarity, and 3 (bf16) or more (int8) of the 20 ideas swap them.
    return precision == "f32";
}

std::string auto_precision() {
    for (const std::string& precision : precisions_fastest_first())
        if (precision_meets_bar(precision)) return precision;
    return "f32";
}

}  // namespace novelty::encoder
