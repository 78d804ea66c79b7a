import QtQuick
import QtTest
import Kestrel
import Kestrel.Backend

// The round button turns into Stop while a reply is written and stops it.
Item {
    width: 900; height: 640
    ChatView { id: view; anchors.fill: parent }

    TestCase {
        name: "Stop"
        when: windowShown

        function initTestCase() {
            if (!modelAvailable) skip("SmolLM2 missing; run scripts/fetch-models.sh")
            tryVerify(() => Chat.modelState === "ready", 60000)
            AppSettings.maxTokens = 400
            verify(AppSettings.apply())
        }
        function cleanupTestCase() {
            AppSettings.maxTokens = 16
            AppSettings.apply()
        }

        function test_stopButton() {
            Chat.newConversation()
            verify(Chat.send("Count from 1 to 500, one number per line."))
            const action = findChild(view, "composerAction")
            verify(action.enabled)
            compare(action.text, "Stop (Esc)")
            tryVerify(() => Chat.messages.count === 2 && Chat.messages.get(1).content.length >= 3, 60000)
            mouseClick(action)
            tryVerify(() => !Chat.generating, 5000, "stopped")
            compare(Chat.messages.get(1).state, "interrupted")
            compare(action.text, "Send (Enter)")
        }
    }
}
