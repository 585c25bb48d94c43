// The one element type: names and sizes, and bfloat16 refused where only float32/float16 exist
// (.npy files, corpus rows), while it remains a device storage choice.
#include "novelty/io/npy.hpp"
#include "novelty/search/backends.hpp"
#include "novelty/util/element_type.hpp"
#include "novelty/util/error.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

namespace novelty {
namespace {

TEST(ElementType, NamesSizesAndTheStorageFlag) {
    EXPECT_STREQ(element_name(ElementType::f32), "f32");
    EXPECT_STREQ(element_name(ElementType::f16), "f16");
    EXPECT_STREQ(element_name(ElementType::bf16), "bf16");
    EXPECT_EQ(element_size(ElementType::f32), 4u);
    EXPECT_EQ(element_size(ElementType::bf16), 2u);
    EXPECT_EQ(parse_storage("bfloat16"), ElementType::bf16);
    EXPECT_EQ(storage_name(parse_storage("float32")), "f32");
}

TEST(ElementType, BFloat16IsNeitherANpyTypeNorCorpusRows) {
    test::TempDir tmp;
    const std::vector<std::uint16_t> values(4, 0x3f80);
    EXPECT_THROW(write_npy(tmp.file("x.npy"), ElementType::bf16, 2, 2, values.data()), UsageError);
    const VectorView rows{values.data(), ElementType::bf16, 2, 2};
    EXPECT_THROW(make_cpu_backend()->build(rows), UsageError);
}

}  // namespace
}  // namespace novelty
