import QtQuick
import QtTest
import Kestrel
import Kestrel.Backend

// Enter sends, Shift+Enter adds a line; the reply streams into the list.
Item {
    width: 900; height: 640
    ChatView { id: view; anchors.fill: parent }

    TestCase {
        name: "Send"
        when: windowShown

        function initTestCase() {
            if (!modelAvailable) skip("SmolLM2 missing; run scripts/fetch-models.sh")
            tryVerify(() => Chat.modelState === "ready", 60000, "the model loads")
        }

        function test_shiftEnterAddsALine_enterSends() {
            Chat.newConversation()
            const input = findChild(view, "composerInput")
            verify(input)
            input.forceActiveFocus()
            keyClick("H"); keyClick("i")
            keyClick(Qt.Key_Return, Qt.ShiftModifier)
            compare(input.text, "Hi\n")
            verify(!Chat.generating)
            keyClick("!")
            keyClick(Qt.Key_Return)
            compare(input.text, "", "the box empties when the message is sent")
            verify(Chat.generating)
            tryVerify(() => !Chat.generating, 60000)
            compare(Chat.messages.count, 2)
            compare(Chat.messages.get(0).content, "Hi\n!")
            verify(Chat.messages.get(1).content.length > 0)
            compare(Chat.messages.get(1).state, "complete")
            verify(Chat.currentConversationId > 0)
        }

        function test_emptyMessageIsNotSent() {
            const input = findChild(view, "composerInput")
            input.forceActiveFocus()
            input.text = "   "
            const before = Chat.messages.count
            keyClick(Qt.Key_Return)
            compare(Chat.messages.count, before)
            verify(!Chat.generating)
            const action = findChild(view, "composerAction")
            verify(!action.enabled)
            input.text = ""
        }
    }
}
