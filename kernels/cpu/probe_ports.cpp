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

#include <cstdio>

namespace {

constexpr long kReps = 20000000;

#define TARGET __attribute__((target("avx512f,avx512bw,avx512vnni"), noinline))

// Time-stamp ticks per core cycle: a chain of dependent one-cycle vector adds.
TARGET double ticksPerCycle() {
    __m512i v = _mm512_set1_epi32(1);
    const __m512i one = _mm512_set1_epi32(1);
    const unsigned long t0 = __rdtsc();
    for (long n = 0; n < kReps; ++n)
        asm volatile("vpaddd %1, %0, %0\n\tvpaddd %1, %0, %0\n\tvpaddd %1, %0, %0\n\tvpaddd %1, %0, %0" : "+v"(v) : "v"(one));
    return double(__rdtsc() - t0) / (kReps * 4.0);
}

// Cycles per vpdpbusd with `Chains` independent accumulators (1: the latency).
template <int Chains>
TARGET double dotCycles(double tpc) {
    __m512i a[Chains];
    for (int i = 0; i < Chains; ++i) a[i] = _mm512_set1_epi32(i);
    __m512i b = _mm512_set1_epi8(1);
    const __m512i c = _mm512_set1_epi8(2);
    const unsigned long t0 = __rdtsc();
    for (long n = 0; n < kReps; ++n) {
#pragma GCC unroll 16
        for (int i = 0; i < Chains; ++i) a[i] = _mm512_dpbusd_epi32(a[i], b, c);
        asm volatile("" : "+v"(b));
    }
    const double cycles = double(__rdtsc() - t0) / tpc / (kReps * double(Chains));
    __m512i s = a[0];
    for (int i = 1; i < Chains; ++i) s = _mm512_add_epi32(s, a[i]);
    asm volatile("" : : "v"(s));
    return cycles;
}

template <int Chains>
TARGET double fmaCycles(double tpc) {
    __m512 a[Chains];
    for (int i = 0; i < Chains; ++i) a[i] = _mm512_set1_ps(float(i));
    __m512 b = _mm512_set1_ps(0.999f);
    const __m512 c = _mm512_set1_ps(0.001f);
    const unsigned long t0 = __rdtsc();
    for (long n = 0; n < kReps; ++n) {
#pragma GCC unroll 16
        for (int i = 0; i < Chains; ++i) a[i] = _mm512_fmadd_ps(a[i], b, c);
        asm volatile("" : "+v"(b));
    }
    const double cycles = double(__rdtsc() - t0) / tpc / (kReps * double(Chains));
    __m512 s = a[0];
    for (int i = 1; i < Chains; ++i) s = _mm512_add_ps(s, a[i]);
    asm volatile("" : : "v"(s));
    return cycles;
}

}  // namespace

int main() {
    if (!__builtin_cpu_supports("avx512vnni") || !__builtin_cpu_supports("avx512bw")) {
        std::printf("this CPU has no AVX-512 VNNI: nothing to probe\n");
        return 0;
    }
    const double tpc = ticksPerCycle();
    std::printf("time-stamp ticks per core cycle: %.3f\n", tpc);
    std::printf("vpdpbusd zmm: latency %.2f cycles; cycles each with 4 / 8 / 12 / 16 chains: %.2f / %.2f / %.2f / %.2f\n",
                dotCycles<1>(tpc), dotCycles<4>(tpc), dotCycles<8>(tpc), dotCycles<12>(tpc), dotCycles<16>(tpc));
    std::printf("vfmadd231ps zmm: latency %.2f cycles; cycles each with 4 / 8 / 12 / 16 chains: %.2f / %.2f / %.2f / %.2f\n",
                fmaCycles<1>(tpc), fmaCycles<4>(tpc), fmaCycles<8>(tpc), fmaCycles<12>(tpc), fmaCycles<16>(tpc));
    return 0;
}
