// Stop strings over a stream of text pieces.
//
// Text that might be the start of a stop string is held back until it is
// clear: either the stop string completes (everything before it is released
// and generation ends; the stop string itself is never shown) or the text
// diverges (it is released). So the user never sees half a stop string that
// then disappears. Per-stream state; not thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kestrel {

class StopMatcher {
public:
    explicit StopMatcher(std::vector<std::string> stops);

    struct Output {
        std::string text;     // safe to show now
        bool stopped = false; // a stop string completed; `text` is what came before it
    };

    Output push(std::string_view piece);
    std::string flush();  // at the end of generation: whatever was held back

private:
    std::vector<std::string> stops_;
    std::string held_;
};

}  // namespace kestrel
