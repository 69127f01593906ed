// HBM bandwidth probe: streaming copy (bytes read + written) and streaming read (sum), 16-byte loads,
// median of 20 timed runs after 3 warm-ups. Prints one JSON line. Build: nvcc -O3 -arch=sm_90 bandwidth.cu
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_runtime.h>

#define CHECK(x)                                                                                             \
    do {                                                                                                     \
        cudaError_t err_ = (x);                                                                              \
        if (err_ != cudaSuccess) {                                                                           \
            std::fprintf(stderr, "CUDA error %s at %s:%d\n", cudaGetErrorString(err_), __FILE__, __LINE__);  \
            std::exit(2);                                                                                    \
        }                                                                                                    \
    } while (0)

__global__ void copyKernel(const float4 *__restrict__ src, float4 *__restrict__ dst, size_t n) {
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
        dst[i] = src[i];
}

__global__ void readKernel(const float4 *__restrict__ src, size_t n, float *__restrict__ sink) {
    float acc = 0.f;
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
         i += size_t(gridDim.x) * blockDim.x) {
        float4 v = src[i];
        acc += v.x + v.y + v.z + v.w;
    }
    // a data-dependent store the compiler cannot drop, taken (almost) never
    if (acc == 1234.5678f)
        sink[0] = acc;
}

__global__ void fillKernel(float4 *p, size_t n) {
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
        p[i] = make_float4(float(i & 1023) * 1e-3f, 1.f, -1.f, 0.5f);
}

template <typename F>
static double medianSeconds(F launch) {
    cudaEvent_t a, b;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    for (int i = 0; i < 3; ++i)
        launch();
    CHECK(cudaGetLastError());
    std::vector<float> ms;
    for (int i = 0; i < 20; ++i) {
        CHECK(cudaEventRecord(a));
        launch();
        CHECK(cudaEventRecord(b));
        CHECK(cudaEventSynchronize(b));
        CHECK(cudaGetLastError());
        float t = 0.f;
        CHECK(cudaEventElapsedTime(&t, a, b));
        ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    CHECK(cudaEventDestroy(a));
    CHECK(cudaEventDestroy(b));
    return ms[ms.size() / 2] / 1e3;
}

int main(int argc, char **argv) {
    size_t mib = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 2048;
    size_t bytes = mib << 20;
    size_t n = bytes / sizeof(float4);
    float4 *src = nullptr, *dst = nullptr;
    float *sink = nullptr;
    CHECK(cudaMalloc(&src, bytes));
    CHECK(cudaMalloc(&dst, bytes));
    CHECK(cudaMalloc(&sink, sizeof(float)));
    int sms = 0;
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    int blocks = sms * 8, threads = 512;
    fillKernel<<<blocks, threads>>>(src, n);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    double tc = medianSeconds([&] { copyKernel<<<blocks, threads>>>(src, dst, n); });
    double tr = medianSeconds([&] { readKernel<<<blocks, threads>>>(src, n, sink); });
    std::printf("{\"copy_gbps\": %.1f, \"read_gbps\": %.1f, \"bytes\": %zu, \"sms\": %d}\n",
                2.0 * bytes / tc / 1e9, bytes / tr / 1e9, bytes, sms);
    CHECK(cudaFree(src));
    CHECK(cudaFree(dst));
    CHECK(cudaFree(sink));
    return 0;
}
