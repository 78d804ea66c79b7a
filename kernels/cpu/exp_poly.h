// Internal to kernels/cpu: the numbers of the one exp formula every kernel here uses
// (ops.cpp's fastExp, exp_avx512.h's exp512, attention_blocked_avx2.cpp's exp256):
// exp(x) = 2^i * p(y), i = round(x log2 e), y = (x log2 e - i) ln 2, x clamped to
// [kExpMin, kExpMax], p the degree-6 Taylor polynomial; relative error ~1e-7. Each
// width evaluates p by Horner from kExpHorner[0], so all of them round alike.
#pragma once

namespace kestrel::kernels {

constexpr float kExpMin = -87.0f, kExpMax = 88.0f;
constexpr float kLog2e = 1.44269504088896341f, kLn2 = 0.693147180559945f;
// p's coefficients from the highest power: y^6 / 720, ..., y, 1.
constexpr float kExpHorner[] = {1.0f / 720.0f, 1.0f / 120.0f, 1.0f / 24.0f, 1.0f / 6.0f, 0.5f, 1.0f, 1.0f};
constexpr int kExpTerms = sizeof(kExpHorner) / sizeof(kExpHorner[0]);

}  // namespace kestrel::kernels
