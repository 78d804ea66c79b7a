// kestrel-probe-ports: the latency and throughput of the AVX-512 operations the
// decode GEMV and attention are made of (vpdpbusd, vfmadd231ps), in core cycles,
// on this machine. Virtual machines hide the performance counters and run the
// time-stamp counter at another rate than the cores, so the core clock is
// calibrated first from a chain of dependent vpaddd (one cycle each).
// Why it exists: whether a kernel is bound by its operations or by their
// latency depends on these numbers (docs/PERFORMANCE.md, twenty-sixth session:
// vpdpbusd zmm has a latency of 6 cycles here, so two a cycle need 12
// independent chains).
#include <immintrin.h>
#include <x86intrin.h>

#include <algorithm>
#include <cstdio>

namespace {

constexpr long kReps = 4000000;
constexpr int kTrials = 5;  // each figure is the fastest of these (other tenants of a shared machine only slow a run)

#define TARGET __attribute__((target("avx512f,avx512bw,avx512vnni"), noinline))
#define TARGET_INLINE __attribute__((target("avx512f,avx512bw,avx512vnni"), always_inline))

// Time-stamp ticks per core cycle: a chain of dependent one-cycle vector adds.
TARGET double ticksPerCycle() {
    __m512i v = _mm512_set1_epi32(1);
    const __m512i one = _mm512_set1_epi32(1);
    double best = 1e30;
    for (int trial = 0; trial < kTrials; ++trial) {
        const unsigned long t0 = __rdtsc();
        for (long n = 0; n < kReps; ++n)
            asm volatile("vpaddd %1, %0, %0\n\tvpaddd %1, %0, %0\n\tvpaddd %1, %0, %0\n\tvpaddd %1, %0, %0" : "+v"(v) : "v"(one));
        best = std::min(best, double(__rdtsc() - t0) / (kReps * 4.0));
    }
    return best;
}

// Cycles per op(acc, b) with `Chains` independent accumulators (1: the latency).
template <int Chains, typename V, typename Op>
TARGET double cyclesEach(double tpc, V start, V b, Op op) {
    V a[Chains];
    for (int i = 0; i < Chains; ++i) a[i] = start;
    double best = 1e30;
    for (int trial = 0; trial < kTrials; ++trial) {
        const unsigned long t0 = __rdtsc();
        for (long n = 0; n < kReps; ++n) {
#pragma GCC unroll 16
            for (int i = 0; i < Chains; ++i) a[i] = op(a[i], b);
            asm volatile("" : "+v"(b));  // b is not a constant: the loop cannot be folded
        }
        best = std::min(best, double(__rdtsc() - t0) / tpc / (kReps * double(Chains)));
    }
    for (int i = 0; i < Chains; ++i) asm volatile("" : : "v"(a[i]));  // the results are used
    return best;
}

template <typename V, typename Op>
TARGET void report(const char* name, double tpc, V start, V b, Op op) {
    std::printf("%s: latency %.2f cycles; cycles each with 4 / 8 / 12 / 16 chains: %.2f / %.2f / %.2f / %.2f\n", name,
                cyclesEach<1>(tpc, start, b, op), cyclesEach<4>(tpc, start, b, op), cyclesEach<8>(tpc, start, b, op),
                cyclesEach<12>(tpc, start, b, op), cyclesEach<16>(tpc, start, b, op));
}

struct Dot {
    TARGET_INLINE __m512i operator()(__m512i acc, __m512i x) const { return _mm512_dpbusd_epi32(acc, x, _mm512_set1_epi8(2)); }
};
struct Fma {
    TARGET_INLINE __m512 operator()(__m512 acc, __m512 x) const { return _mm512_fmadd_ps(acc, x, _mm512_set1_ps(0.001f)); }
};

TARGET void probe(double tpc) {
    report("vpdpbusd zmm", tpc, _mm512_set1_epi32(1), _mm512_set1_epi8(1), Dot{});
    report("vfmadd231ps zmm", tpc, _mm512_set1_ps(1.0f), _mm512_set1_ps(0.999f), Fma{});
}

}  // namespace

int main() {
    if (!__builtin_cpu_supports("avx512vnni") || !__builtin_cpu_supports("avx512bw")) {
        std::printf("this CPU has no AVX-512 VNNI: nothing to probe\n");
        return 0;
    }
    const double tpc = ticksPerCycle();
    std::printf("time-stamp ticks per core cycle: %.3f\n", tpc);
    probe(tpc);
    return 0;
}
