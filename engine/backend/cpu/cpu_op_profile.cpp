#include "cpu_op_profile.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace kestrel::backend {
namespace {

constexpr const char* kRowsClasses[] = {"1", "2-4", "5-16", ">16"};

int rowsClass(int64_t rows) { return rows <= 1 ? 0 : rows <= 4 ? 1 : rows <= 16 ? 2 : 3; }

}  // namespace

std::unique_ptr<CpuOpProfile> CpuOpProfile::fromEnvironment() {
    const char* v = std::getenv("KESTREL_CPU_PROFILE");
    if (!v || !*v || std::strcmp(v, "0") == 0) return nullptr;
    return std::make_unique<CpuOpProfile>();
}

CpuOpProfile::Scope::Scope(CpuOpProfile* profile, const char* op, int64_t rows, int64_t wRows, int64_t wCols)
    : profile_(profile), op_(op), rows_(rows), wRows_(wRows), wCols_(wCols) {
    if (profile_) start_ = std::chrono::steady_clock::now();
}

CpuOpProfile::Scope::~Scope() {
    if (!profile_) return;
    const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start_).count();
    profile_->add(op_, rows_, wRows_, wCols_, us);
}

void CpuOpProfile::add(const char* op, int64_t rows, int64_t wRows, int64_t wCols, double us) {
    const int rc = rowsClass(rows);
    auto it = std::find_if(rows_.begin(), rows_.end(), [&](const Row& r) {
        return r.op == op && r.rowsClass == rc && r.wRows == wRows && r.wCols == wCols;
    });
    if (it == rows_.end()) it = rows_.insert(rows_.end(), Row{op, rc, wRows, wCols});
    it->us += us;
    ++it->calls;
}

CpuOpProfile::~CpuOpProfile() {
    std::sort(rows_.begin(), rows_.end(), [](const Row& a, const Row& b) {
        return a.rowsClass != b.rowsClass ? a.rowsClass < b.rowsClass : a.us > b.us;
    });
    std::fprintf(stderr, "cpu op profile (KESTREL_CPU_PROFILE):\n%-6s %-12s %-12s %10s %9s %10s\n", "rows", "op", "weight",
                 "total ms", "calls", "us/call");
    for (const Row& r : rows_) {
        char shape[32] = "";
        if (r.wRows > 0) std::snprintf(shape, sizeof shape, "%lldx%lld", static_cast<long long>(r.wRows),
                                       static_cast<long long>(r.wCols));
        std::fprintf(stderr, "%-6s %-12s %-12s %10.2f %9lld %10.2f\n", kRowsClasses[r.rowsClass], r.op, shape,
                     r.us / 1e3, static_cast<long long>(r.calls), r.us / static_cast<double>(r.calls));
    }
}

}  // namespace kestrel::backend
