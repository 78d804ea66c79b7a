// One checked quantity of a test that runs without Qt (the CUDA checks, the
// reference check): what was compared, how far apart, against what bound.
#pragma once

#include <string>

namespace kestrel::test {

struct Finding {
    std::string name;
    double error = 0.0;  // normalised error (or the failing quantity)
    double bound = 0.0;
    bool ok = false;
    std::string note;
};

}  // namespace kestrel::test
