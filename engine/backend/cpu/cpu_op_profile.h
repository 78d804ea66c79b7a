// KESTREL_CPU_PROFILE=1: the CPU backend times every op it runs, grouped by
// the op, the weight's shape for products, and the number of rows (1, 2-4,
// 5-16, more: decode steps of one and of several sequences, and prefill
// chunks), and prints the table to stderr when the backend is destroyed.
// This is how a decode step's time was split per op (docs/PERFORMANCE.md,
// fourteenth session). Off, an op pays one branch on a null pointer.
//
// Thread-safety: as the backend's ops, one at a time.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

namespace kestrel::backend {

class CpuOpProfile {
public:
    // A profile when KESTREL_CPU_PROFILE is set to anything but "0"; else null.
    static std::unique_ptr<CpuOpProfile> fromEnvironment();
    ~CpuOpProfile();  // prints the table

    // Times from construction to destruction into `profile`'s row for the op
    // (nothing when profile is null). `op` must be a string literal.
    class Scope {
    public:
        Scope(CpuOpProfile* profile, const char* op, int64_t rows, int64_t wRows = 0, int64_t wCols = 0);
        ~Scope();
        Scope(const Scope&) = delete;
        Scope& operator=(const Scope&) = delete;

    private:
        CpuOpProfile* profile_;
        const char* op_;
        int64_t rows_, wRows_, wCols_;
        std::chrono::steady_clock::time_point start_;
    };

private:
    struct Row {
        const char* op;
        int rowsClass;
        int64_t wRows, wCols;
        double us = 0.0;
        int64_t calls = 0;
    };
    void add(const char* op, int64_t rows, int64_t wRows, int64_t wCols, double us);
    std::vector<Row> rows_;
};

}  // namespace kestrel::backend
