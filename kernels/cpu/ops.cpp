// Norms, RoPE, GLU and vector helpers. The loops are written branch-free with
// fixed-width partial sums so that the compiler vectorises them; target_clones
// builds each hot function for baseline x86-64 and for x86-64-v3 (AVX2, FMA)
// and the loader picks one per CPU. Not "arch=haswell": GCC dispatches that
// clone on the CPU model (a Haswell, cpu_subtype 13), so every other CPU,
// AMD's and newer Intel ones alike, ran the baseline SSE2 code; x86-64-v3
// dispatches on the ISA level.
#include "exp_poly.h"
#include "ops.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <numbers>
#include <string_view>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define KESTREL_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define KESTREL_CLONES
#endif

namespace kestrel::kernels {

void gluRangeAvx512(const float* gate, const float* up, float* out, int64_t begin, int64_t end, GluKind kind);
int64_t argmaxRowAvx512(const float* x, int64_t n);

namespace {

// exp(x) for x <= 0 ish ranges used by sigmoid/softmax: 2^(x log2 e) split into
// an integer power (built in the exponent bits) and a degree-6 polynomial on
// [-0.5, 0.5]; relative error below 2e-7, no branches so it vectorises. Only
// builtins inside: GCC 12 does not inline a function of another -march into a
// target clone, so std::nearbyint and std::bit_cast were calls once per value
// and the GLU loop stayed scalar; the clamp is two selects, and the builtin
// nearbyint vectorises with -fno-trapping-math (set for this file in CMakeLists.txt).
// The numbers are exp_poly.h's, shared with the AVX-512 and AVX2 versions.
[[gnu::always_inline]] inline float fastExp(float x) {
    x = x < kExpMin ? kExpMin : x;
    x = x > kExpMax ? kExpMax : x;
    const float t = x * kLog2e;
    const float fi = __builtin_nearbyintf(t);
    const float f = t - fi;  // [-0.5, 0.5]
    // 2^f as e^(f ln 2), Taylor to degree 6 (accurate enough here).
    const float y = f * kLn2;
    float p = kExpHorner[0];
#pragma GCC unroll 8
    for (int i = 1; i < kExpTerms; ++i) p = p * y + kExpHorner[i];
    const int32_t e = static_cast<int32_t>(fi) + 127;
    const float scaleBits = __builtin_bit_cast(float, static_cast<uint32_t>(e) << 23);
    return p * scaleBits;
}

[[gnu::always_inline]] inline float sigmoid(float x) { return 1.0f / (1.0f + fastExp(-x)); }

KESTREL_CLONES
void rmsNormRows(const float* x, const float* gamma, float eps, float* y, int64_t begin, int64_t end,
                 int64_t groupSize) {
    for (int64_t g = begin; g < end; ++g) {
        const float* xr = x + g * groupSize;
        float* yr = y + g * groupSize;
        float acc[8] = {};
        int64_t i = 0;
        for (; i + 8 <= groupSize; i += 8)
            for (int l = 0; l < 8; ++l) acc[l] += xr[i + l] * xr[i + l];
        float ss = 0.0f;
        for (; i < groupSize; ++i) ss += xr[i] * xr[i];
        for (float a : acc) ss += a;
        const float inv = 1.0f / std::sqrt(ss / static_cast<float>(groupSize) + eps);
        for (int64_t j = 0; j < groupSize; ++j) yr[j] = xr[j] * inv * gamma[j];
    }
}

KESTREL_CLONES
void gluRangePortable(const float* gate, const float* up, float* out, int64_t begin, int64_t end, GluKind kind) {
    if (kind == GluKind::Silu) {
        for (int64_t i = begin; i < end; ++i) {
            const float g = gate[i];
            out[i] = g * sigmoid(g) * up[i];
        }
    } else {
        // gelu_tanh(g) = 0.5 g (1 + tanh(u)) = g * sigmoid(2u), u = sqrt(2/pi) (g + 0.044715 g^3)
        const float c = 2.0f * std::sqrt(2.0f / std::numbers::pi_v<float>);
        for (int64_t i = begin; i < end; ++i) {
            const float g = gate[i];
            const float u = c * (g + 0.044715f * g * g * g);
            out[i] = g * sigmoid(u) * up[i];
        }
    }
}

// AVX-512 for the element-wise loops; KESTREL_CPU_ISA=scalar|avx2 (tests) keeps the
// portable ones, as it does for matmul.
bool elementwiseAvx512() {
    static const bool avx512 = [] {
        const char* isa = std::getenv("KESTREL_CPU_ISA");
        const std::string_view want = isa ? isa : "";
        return __builtin_cpu_supports("avx512f") && want != "scalar" && want != "avx2";
    }();
    return avx512;
}

void gluRange(const float* gate, const float* up, float* out, int64_t begin, int64_t end, GluKind kind) {
    if (elementwiseAvx512())
        gluRangeAvx512(gate, up, out, begin, end, kind);
    else
        gluRangePortable(gate, up, out, begin, end, kind);
}

int64_t argmaxRowPortable(const float* x, int64_t n) {
    int64_t best = 0;
    for (int64_t i = 1; i < n; ++i)
        if (x[i] > x[best]) best = i;
    return best;
}

KESTREL_CLONES
void ropeRows(float* x, int64_t begin, int64_t end, int64_t cols, int headDim, const RopeAngles& angles, bool neox) {
    const int pairs = angles.pairs();
    const int64_t heads = cols / headDim;
    for (int64_t r = begin; r < end; ++r) {
        const float* cosv = angles.cosOf(r);
        const float* sinv = angles.sinOf(r);
        for (int64_t h = 0; h < heads; ++h) {
            float* v = x + r * cols + h * headDim;
            if (neox) {
                float* a = v;
                float* b = v + pairs;
                for (int i = 0; i < pairs; ++i) {
                    const float x0 = a[i], x1 = b[i];
                    a[i] = x0 * cosv[i] - x1 * sinv[i];
                    b[i] = x0 * sinv[i] + x1 * cosv[i];
                }
            } else {
                for (int i = 0; i < pairs; ++i) {
                    const float x0 = v[2 * i], x1 = v[2 * i + 1];
                    v[2 * i] = x0 * cosv[i] - x1 * sinv[i];
                    v[2 * i + 1] = x0 * sinv[i] + x1 * cosv[i];
                }
            }
        }
    }
}

}  // namespace

int64_t argmaxRow(const float* x, int64_t n) {
    // A NaN first wins for good (nothing is greater): the loop's answer, as for short rows.
    const bool vector = n >= 32 && n <= INT32_MAX && !std::isnan(x[0]) && elementwiseAvx512();
    return vector ? argmaxRowAvx512(x, n) : argmaxRowPortable(x, n);
}

void rmsNorm(const float* x, const float* gamma, float eps, float* y, int64_t rows, int64_t cols, int64_t groupSize,
             ThreadPool& pool) {
    const int64_t groups = rows * (cols / groupSize);
    // One token's norm is ~1 µs: threads only pay for prefill-sized batches.
    if (groups * groupSize < 16384) {
        rmsNormRows(x, gamma, eps, y, 0, groups, groupSize);
        return;
    }
    // One captured pointer keeps the std::function in its small buffer: no allocation per call.
    struct Args {
        const float *x, *gamma;
        float eps;
        float* y;
        int64_t groupSize;
    } args{x, gamma, eps, y, groupSize};
    pool.parallelFor(
        groups, [a = &args](int64_t b, int64_t e, int) { rmsNormRows(a->x, a->gamma, a->eps, a->y, b, e, a->groupSize); },
        std::max<int64_t>(1, 4096 / groupSize));
}

float ropeFrequencies(const RopeConfig& cfg, float* invFreq) {
    const int pairs = cfg.dims / 2;
    float mscale = cfg.attnFactor;
    const double twoPi = 2.0 * std::numbers::pi;
    // yarn ramp bounds: the pair indices whose wavelength spans betaFast/betaSlow rotations
    // over the original context.
    auto corrDim = [&](double rotations) {
        return cfg.dims * std::log(cfg.originalContext / (rotations * twoPi)) / (2.0 * std::log(cfg.base));
    };
    double yarnLow = 0, yarnHigh = 0;
    if (cfg.scaling == RopeScaling::Yarn) {
        yarnLow = std::max(0.0, std::floor(corrDim(cfg.yarnBetaFast)));
        yarnHigh = std::min(static_cast<double>(cfg.dims - 1), std::ceil(corrDim(cfg.yarnBetaSlow)));
        if (cfg.yarnExtFactor != 0.0f && cfg.factor > 1.0f) mscale *= 1.0f + 0.1f * std::log(cfg.factor);
    }
    for (int i = 0; i < pairs; ++i) {
        double f = std::pow(static_cast<double>(cfg.base), -2.0 * i / cfg.dims);
        if (cfg.freqFactors) f /= cfg.freqFactors[i];
        switch (cfg.scaling) {
        case RopeScaling::None: break;
        case RopeScaling::Linear: f /= cfg.factor; break;
        case RopeScaling::Llama3: {
            const double wavelen = twoPi / f;
            const double lowWavelen = cfg.originalContext / cfg.lowFreqFactor;
            const double highWavelen = cfg.originalContext / cfg.highFreqFactor;
            if (wavelen > lowWavelen) {
                f /= cfg.factor;
            } else if (wavelen >= highWavelen) {
                const double smooth = (cfg.originalContext / wavelen - cfg.lowFreqFactor) /
                                      (cfg.highFreqFactor - cfg.lowFreqFactor);
                f = (1.0 - smooth) * f / cfg.factor + smooth * f;
            }
            break;
        }
        case RopeScaling::Yarn: {
            const double ramp = std::clamp((i - yarnLow) / std::max(0.001, yarnHigh - yarnLow), 0.0, 1.0);
            const double mix = (1.0 - ramp) * cfg.yarnExtFactor;
            f = (f / cfg.factor) * (1.0 - mix) + f * mix;
            break;
        }
        }
        invFreq[i] = static_cast<float>(f);
    }
    return mscale;
}

bool RopeAngles::holds(const int32_t* positions, int64_t rows, const float* invFreq, int pairs, float mscale) const {
    return pairs == pairs_ && mscale == mscale_ && rows == static_cast<int64_t>(positions_.size()) &&
           std::equal(positions, positions + rows, positions_.begin()) &&
           std::equal(invFreq, invFreq + pairs, invFreq_.begin());
}

void RopeAngles::fill(const int32_t* positions, int64_t rows, const float* invFreq, int pairs, float mscale) {
    positions_.assign(positions, positions + rows);
    invFreq_.assign(invFreq, invFreq + pairs);
    mscale_ = mscale;
    pairs_ = pairs;
    cos_.resize(static_cast<size_t>(rows * pairs));
    sin_.resize(cos_.size());
    for (int64_t r = 0; r < rows; ++r) {
        const float pos = static_cast<float>(positions[r]);
        for (int i = 0; i < pairs; ++i) {
            const float theta = pos * invFreq[i];
            cos_[static_cast<size_t>(r * pairs + i)] = std::cos(theta) * mscale;
            sin_[static_cast<size_t>(r * pairs + i)] = std::sin(theta) * mscale;
        }
    }
}

void rope(float* x, int64_t rows, int64_t cols, int headDim, const RopeAngles& angles, bool neox, ThreadPool& pool) {
    // With the angles at hand a row is a few hundred multiply-adds: split only prefill-sized batches.
    if (rows < 16) {
        ropeRows(x, 0, rows, cols, headDim, angles, neox);
        return;
    }
    struct Args {
        float* x;
        int64_t cols;
        int headDim;
        const RopeAngles* angles;
        bool neox;
    } args{x, cols, headDim, &angles, neox};
    pool.parallelFor(rows, [a = &args](int64_t b, int64_t e, int) {
        ropeRows(a->x, b, e, a->cols, a->headDim, *a->angles, a->neox);
    });
}

void rope(float* x, int64_t rows, int64_t cols, int headDim, const int32_t* positions, int dims, bool neox,
          const float* invFreq, float mscale, ThreadPool& pool) {
    RopeAngles angles;
    angles.fill(positions, rows, invFreq, dims / 2, mscale);
    rope(x, rows, cols, headDim, angles, neox, pool);
}

void glu(const float* gate, const float* up, float* out, int64_t n, GluKind kind, ThreadPool& pool) {
    if (n < 32768) {
        gluRange(gate, up, out, 0, n, kind);
        return;
    }
    struct Args {
        const float *gate, *up;
        float* out;
        GluKind kind;
    } args{gate, up, out, kind};
    pool.parallelFor(
        n, [a = &args](int64_t b, int64_t e, int) { gluRange(a->gate, a->up, a->out, b, e, a->kind); }, 8192);
}

KESTREL_CLONES
void add(const float* a, const float* b, float* out, int64_t n) {
    for (int64_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
}

KESTREL_CLONES
void scale(const float* x, float s, float* out, int64_t n) {
    for (int64_t i = 0; i < n; ++i) out[i] = x[i] * s;
}

KESTREL_CLONES
void addBias(float* x, const float* bias, int64_t rows, int64_t cols) {
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c) x[r * cols + c] += bias[c];
}

KESTREL_CLONES
void softmax(float* x, int64_t n) {
    if (n <= 0) return;
    float m = x[0];
    for (int64_t i = 1; i < n; ++i) m = std::max(m, x[i]);
    float sum = 0.0f;
    for (int64_t i = 0; i < n; ++i) {
        x[i] = fastExp(x[i] - m);
        sum += x[i];
    }
    const float inv = 1.0f / sum;
    for (int64_t i = 0; i < n; ++i) x[i] *= inv;
}

void softcap(float* x, int64_t n, float cap) {
    const float inv = 1.0f / cap;
    for (int64_t i = 0; i < n; ++i) x[i] = cap * std::tanh(x[i] * inv);
}

#if defined(__x86_64__) && defined(__GNUC__)
namespace {
// The F16C instruction rounds to nearest even as the portable code below does;
// ~10x faster, which matters for storeKv (every K and V value of a prefill).
[[gnu::target("f16c")]] uint16_t floatToHalfF16c(float f) {
    return static_cast<uint16_t>(_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT));
}
}  // namespace
#endif

#if defined(__x86_64__) && defined(__GNUC__)
namespace {
// 8 values per instruction; a group holding a NaN takes floatToHalf (its canonical NaN).
// Returns how many values it converted (whole groups of 8).
[[gnu::target("avx,f16c")]] int64_t floatsToHalvesF16c(const float* src, uint16_t* dst, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 v = _mm256_loadu_ps(src + i);
        if (_mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)) != 0)
            for (int64_t j = i; j < i + 8; ++j) dst[j] = floatToHalf(src[j]);
        else
            _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
    }
    return i;
}
}  // namespace
#endif

void floatsToHalves(const float* src, uint16_t* dst, int64_t n) {
    int64_t i = 0;
#if defined(__x86_64__) && defined(__GNUC__)
    static const bool f16c = __builtin_cpu_supports("f16c") && __builtin_cpu_supports("avx");
    if (f16c) i = floatsToHalvesF16c(src, dst, n);
#endif
    for (; i < n; ++i) dst[i] = floatToHalf(src[i]);
}

uint16_t floatToHalf(float f) {
#if defined(__x86_64__) && defined(__GNUC__)
    static const bool f16c = __builtin_cpu_supports("f16c");
    // NaNs take the portable path: it returns one canonical quiet NaN, F16C keeps payload bits.
    if (f16c && f == f) return floatToHalfF16c(f);
#endif
    const uint32_t x = std::bit_cast<uint32_t>(f);
    const uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t absx = x & 0x7fffffffu;
    if (absx >= 0x7f800000u) return static_cast<uint16_t>(sign | (absx > 0x7f800000u ? 0x7e00u : 0x7c00u));
    if (absx >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to inf
    if (absx < 0x38800000u) {  // subnormal half
        const float a = std::bit_cast<float>(absx) * 16777216.0f;  // * 2^24
        return static_cast<uint16_t>(sign | static_cast<uint32_t>(std::nearbyint(a)));
    }
    // normal: rebias exponent, round mantissa to nearest even
    const uint32_t mant = absx & 0x7fffffu;
    uint32_t h = ((absx >> 23) - 112u) << 10 | (mant >> 13);
    const uint32_t rest = mant & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;
    return static_cast<uint16_t>(sign | h);
}

float halfToFloat(uint16_t h) {
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    const uint32_t exp = (h >> 10) & 0x1fu;
    const uint32_t mant = h & 0x3ffu;
    if (exp == 0) {
        const float v = static_cast<float>(mant) * (1.0f / 16777216.0f);
        return sign ? -v : v;
    }
    if (exp == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));
    return std::bit_cast<float>(sign | ((exp + 112u) << 23) | (mant << 13));
}

}  // namespace kestrel::kernels
