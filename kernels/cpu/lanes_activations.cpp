#include "lanes_activations.h"

#include "lanes_layout.h"

#include <cstring>

namespace kestrel::kernels {

void prepareLanesGroupPortable(const int8_t* qs, const float* dx4, int slots, int blocks, unsigned char* out) {
    const int lanesPerBlock = 16 / slots;
    const int vectors = lanesActivationVectors(slots);
    float dx[16];
    int32_t sum[16];
    for (int l = 0; l < 16; ++l) {
        const int block = l / lanesPerBlock, sub = l % lanesPerBlock;
        const bool present = block < blocks;
        sum[l] = 0;
        for (int k = 0; k < vectors; ++k) {
            int8_t q[4] = {0, 0, 0, 0};
            if (present) std::memcpy(q, qs + 4 * (block * 8 + k * lanesPerBlock + sub), 4);
            std::memcpy(out + k * 64 + 4 * l, q, 4);
            sum[l] += q[0] + q[1] + q[2] + q[3];
        }
        dx[l] = present ? dx4[block * 8] : 0.0f;
    }
    float scaledSum[16];
    for (int l = 0; l < 16; ++l) scaledSum[l] = dx[l] * static_cast<float>(sum[l]);
    std::memcpy(out + lanesScalesAt(slots), dx, sizeof dx);
    std::memcpy(out + lanesSumsAt(slots), sum, sizeof sum);
    std::memcpy(out + lanesScaledSumsAt(slots), scaledSum, sizeof scaledSum);
}

void prepareLanesActivations(const QuantActivations& act, int64_t nb, LanesActivations& out, PrepareLanesGroupFn group) {
    if (act.serial != 0 && act.serial == out.serial && nb == out.nb) return;
    out.serial = act.serial;
    out.nb = nb;
    size_t tokenBytes = 0;
    forEachLanesGroup(nb, [&](LanesGroup g, int64_t) { tokenBytes += lanesActivationGroupBytes(g.slots); });
    out.tokenBytes = tokenBytes;
    const size_t bytes = static_cast<size_t>(act.tokens) * tokenBytes + 64;
    if (out.storage.size() < bytes) out.storage.resize(bytes);
    auto* base = reinterpret_cast<unsigned char*>((reinterpret_cast<uintptr_t>(out.storage.data()) + 63) / 64 * 64);
    out.base = base;
    for (int64_t t = 0; t < act.tokens; ++t) {
        unsigned char* o = base + t * tokenBytes;
        const int8_t* qs = act.qs + t * act.colsPadded;
        const float* dx4 = act.dx4 + t * act.colsPadded / 4;
        forEachLanesGroup(nb, [&](LanesGroup g, int64_t b0) {
            group(qs + b0 * kQK, dx4 + b0 * 8, g.slots, g.blocks, o);
            o += lanesActivationGroupBytes(g.slots);
        });
    }
}

LanesActivations& lanesActivationScratch() {
    thread_local LanesActivations a;
    return a;
}

}  // namespace kestrel::kernels
