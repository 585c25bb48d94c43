// The devices API agrees with how the engine was built, and never throws on a machine without
// a driver or a device.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "novelty/search/devices.hpp"

namespace {

TEST(Devices, CompiledFlagMatchesBuild) {
#if defined(NOVELTY_WITH_CUDA)
    EXPECT_TRUE(novelty::cuda_compiled());
#else
    EXPECT_FALSE(novelty::cuda_compiled());
#endif
}

TEST(Devices, ListNeverThrows) {
    std::vector<novelty::DeviceInfo> devices;
    EXPECT_NO_THROW(devices = novelty::list_devices());
    EXPECT_NO_THROW(devices = novelty::list_devices());  // a second call sees the same state
}

#if defined(NOVELTY_WITH_CUDA)

TEST(Devices, CudaBuildReportsArchitecturesAndVersions) {
    EXPECT_FALSE(novelty::cuda_architectures().empty());
    EXPECT_EQ(novelty::cuda_architectures(), std::string(NOVELTY_CUDA_ARCHS));
    std::string versions;
    EXPECT_NO_THROW(versions = novelty::cuda_versions());
    EXPECT_NE(versions.find(" / "), std::string::npos) << versions;
}

TEST(Devices, ReportedDevicesAreConsistent) {
    const auto devices = novelty::list_devices();
    for (std::size_t i = 0; i < devices.size(); ++i) {
        const auto& device = devices[i];
        EXPECT_EQ(device.index, static_cast<int>(i));
        EXPECT_FALSE(device.name.empty());
        EXPECT_GT(device.compute_major, 0);
        EXPECT_GT(device.multiprocessors, 0);
        EXPECT_GT(device.total_memory_bytes, 0u);
        EXPECT_LE(device.free_memory_bytes, device.total_memory_bytes);
    }
}

#else

TEST(Devices, CpuBuildHasNoCuda) {
    EXPECT_TRUE(novelty::cuda_architectures().empty());
    EXPECT_TRUE(novelty::cuda_versions().empty());
    EXPECT_TRUE(novelty::list_devices().empty());
}

#endif

}  // namespace
