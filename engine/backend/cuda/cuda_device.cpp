// Device selection: clear errors before any model memory is touched.
#include "cuda_backend_impl.h"
#include "decode_step.cuh"

#include <charconv>
#include <cstdlib>

namespace kestrel::backend {

Result<int> parseCudaDevice(const std::string& spec) {
    if (spec == "cuda") return 0;
    if (spec.rfind("cuda:", 0) == 0) {
        int n = -1;
        const char* b = spec.data() + 5;
        const char* e = spec.data() + spec.size();
        auto [ptr, ec] = std::from_chars(b, e, n);
        if (ec == std::errc() && ptr == e && n >= 0) return n;
    }
    return Status(ErrorCode::InvalidArgument, "device '" + spec + "': expected cuda or cuda:N (N = 0, 1, ...)");
}

Result<CudaDeviceInfo> probeCudaDevice(int device) {
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e == cudaErrorNoDevice || (e == cudaSuccess && count == 0))
        return Status(ErrorCode::Unsupported, "no CUDA GPU found (cudaGetDeviceCount reports none); use --device cpu");
    if (e == cudaErrorInsufficientDriver)
        return Status(ErrorCode::Unsupported, "no NVIDIA driver found, or it is older than this build's CUDA runtime (" +
                                                  std::to_string(CUDART_VERSION / 1000) + "." +
                                                  std::to_string(CUDART_VERSION % 1000 / 10) +
                                                  "); install or update the driver, or use --device cpu");
    if (e != cudaSuccess)
        return Status(ErrorCode::Unsupported, std::string("the CUDA driver cannot be used: ") + cudaGetErrorString(e) +
                                                  "; use --device cpu");
    if (device < 0 || device >= count)
        return Status(ErrorCode::InvalidArgument, "device cuda:" + std::to_string(device) + " does not exist (" +
                                                      std::to_string(count) + " CUDA GPU" + (count == 1 ? "" : "s") + " found)");
    cudaDeviceProp prop{};
    if (cudaError_t pe = cudaGetDeviceProperties(&prop, device); pe != cudaSuccess)
        return cudaimpl::cudaStatus(pe, "reading the properties of cuda:" + std::to_string(device));
    CudaDeviceInfo info;
    info.index = device;
    info.name = prop.name;
    info.computeMajor = prop.major;
    info.computeMinor = prop.minor;
    info.multiprocessors = prop.multiProcessorCount;
    if (prop.major < 6 || (prop.major == 6 && prop.minor < 1))
        return Status(ErrorCode::Unsupported, "GPU '" + info.name + "' has compute capability " + std::to_string(prop.major) +
                                                  "." + std::to_string(prop.minor) +
                                                  "; Kestrel's CUDA kernels need 6.1 or newer (dp4a); use --device cpu");
    if (cudaError_t se = cudaSetDevice(device); se != cudaSuccess)
        return cudaimpl::cudaStatus(se, "selecting cuda:" + std::to_string(device));
    // A build without machine code (or PTX) for this GPU fails at the first launch: find out now.
    cudaFuncAttributes attr{};
    if (cudaError_t fe = cuda::probeKernelAttributes(&attr); fe != cudaSuccess) {
        cudaGetLastError();
        return Status(ErrorCode::Unsupported, "this build of Kestrel has no CUDA kernels for GPU '" + info.name +
                                                  "' (compute capability " + std::to_string(prop.major) + "." +
                                                  std::to_string(prop.minor) + "): rebuild with -DKESTREL_CUDA_ARCHS=" +
                                                  std::to_string(prop.major * 10 + prop.minor) + " or use --device cpu");
    }
    cudaMemGetInfo(&info.freeBytes, &info.totalBytes);
    return info;
}

Result<std::unique_ptr<Backend>> createCudaBackend(int device) {
    auto b = cudaimpl::CudaBackend::create(device);
    if (!b) return b.status();
    return std::unique_ptr<Backend>(std::move(b).value());
}

namespace cudaimpl {

double CudaBackend::peakBandwidthGBs() const {
    // Memory clock (kHz) x 2 transfers per clock x bus width: an H100 80GB HBM3 reports
    // 2619 MHz and 5120 bits, 3352 GB/s, its data sheet's figure.
    int clockKHz = 0, busBits = 0;
    if (cudaDeviceGetAttribute(&clockKHz, cudaDevAttrMemoryClockRate, device_) != cudaSuccess ||
        cudaDeviceGetAttribute(&busBits, cudaDevAttrGlobalMemoryBusWidth, device_) != cudaSuccess) {
        cudaGetLastError();
        return 0.0;
    }
    return 2.0 * clockKHz * 1e3 * (busBits / 8.0) / 1e9;
}

Result<std::unique_ptr<CudaBackend>> CudaBackend::create(int device) {
    auto info = probeCudaDevice(device);
    if (!info) return info.status();
    auto b = std::unique_ptr<CudaBackend>(new CudaBackend());
    b->device_ = device;
    b->name_ = "cuda:" + std::to_string(device) + " (" + info->name + ", sm_" + std::to_string(info->computeMajor) +
               std::to_string(info->computeMinor) + ")";
    const char* prof = std::getenv("KESTREL_CUDA_PROFILE");
    b->profiling_ = prof && *prof && *prof != '0';
    KESTREL_RETURN_IF_ERROR(b->check(cudaStreamCreateWithFlags(&b->stream_, cudaStreamNonBlocking), "creating a stream"));
    b->tracer_.start();
    const size_t syncBytes = sizeof(unsigned) * cuda::kDecodeSyncWords;
    KESTREL_RETURN_IF_ERROR(b->check(cudaMalloc(&b->decodeSync_, syncBytes), "allocating decode-step barriers"));
    KESTREL_RETURN_IF_ERROR(b->check(cudaMemset(b->decodeSync_, 0, syncBytes), "clearing decode-step barriers"));
    return b;
}

}  // namespace cudaimpl
}  // namespace kestrel::backend
