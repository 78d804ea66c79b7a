import QtQuick
import QtTest
import Kestrel
import Kestrel.Backend
import "find_text.js" as Find

// A reply cut at its length limit says so under it, and its Continue button goes
// on writing the same message.
Item {
    width: 900; height: 640
    ChatView { id: view; anchors.fill: parent }

    TestCase {
        name: "Continue"
        when: windowShown

        function initTestCase() {
            if (!modelAvailable) skip("SmolLM2 missing; run scripts/fetch-models.sh")
            tryVerify(() => Chat.modelState === "ready", 60000)
            AppSettings.maxTokens = 8
            verify(AppSettings.apply())
        }
        function cleanupTestCase() {
            AppSettings.maxTokens = 16
            AppSettings.apply()
        }

        function test_continueButton() {
            Chat.newConversation()
            verify(Chat.send("List the numbers from 1 to 40, separated by commas."))
            tryVerify(() => !Chat.generating, 60000)
            compare(Chat.messages.get(1).stopReason, "max_tokens")
            verify(Chat.messages.get(1).continuable)
            wait(50)
            verify(Find.findText(view, "cut at the reply length limit"), "the cut is said under the reply")
            const button = Find.findText(view, "Continue")
            verify(button, "a Continue button under the cut reply")
            const before = Chat.messages.get(1).content
            mouseClick(button)
            tryVerify(() => !Chat.generating, 60000)
            compare(Chat.messages.count, 2)
            const after = Chat.messages.get(1).content
            verify(after.length > before.length && after.startsWith(before), before + " | " + after)
        }
    }
}
