import QtQuick
import QtTest
import Kestrel
import Kestrel.Backend

// Typing in the search field filters the conversation list (full text).
Item {
    width: 300; height: 640
    Sidebar { id: sidebar; anchors.fill: parent }

    TestCase {
        name: "Search"
        when: windowShown

        function type(text) { for (const c of text) keyClick(c) }

        function initTestCase() {
            if (!modelAvailable) skip("SmolLM2 missing; run scripts/fetch-models.sh")
            tryVerify(() => Chat.modelState === "ready", 60000)
            Chat.newConversation()
            verify(Chat.send("Tell me about the hovering kestrel."))
            tryVerify(() => !Chat.generating, 60000)
        }

        function test_searchFilters() {
            const search = findChild(sidebar, "searchField")
            verify(search)
            const all = Chat.conversations.count
            verify(all >= 1)
            sidebar.focusSearch()
            verify(search.activeFocus)
            type("hovering")
            compare(Chat.conversations.query, "hovering")
            tryCompare(Chat.conversations, "count", 1)
            search.text = "zzzqqq"
            compare(Chat.conversations.count, 0)
            keyClick(Qt.Key_Escape)
            compare(search.text, "")
            compare(Chat.conversations.count, all)
        }
    }
}
