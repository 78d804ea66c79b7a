import QtQuick
import QtTest
import Kestrel
import Kestrel.Backend
import "find_text.js" as Find

// Editing a message starts a branch; "< 2/2 >" switches between versions.
Item {
    width: 900; height: 640
    ChatView { id: view; anchors.fill: parent }

    TestCase {
        name: "Branch"
        when: windowShown

        function initTestCase() {
            if (!modelAvailable) skip("SmolLM2 missing; run scripts/fetch-models.sh")
            tryVerify(() => Chat.modelState === "ready", 60000)
        }

        function test_editAndSwitch() {
            Chat.newConversation()
            verify(Chat.send("Name a colour."))
            tryVerify(() => !Chat.generating, 60000)
            const userId = Chat.messages.get(0).messageId
            verify(Chat.editMessage(userId, "Name a fruit."))
            tryVerify(() => !Chat.generating, 60000)
            compare(Chat.messages.get(0).content, "Name a fruit.")
            compare(Chat.messages.get(0).siblingCount, 2)
            compare(Chat.messages.get(0).siblingIndex, 1)
            wait(50)
            const switcherText = Find.findText(view, "2/2")
            verify(switcherText, "the branch switcher shows 2/2")
            verify(Chat.switchBranch(Chat.messages.get(0).messageId, -1))
            compare(Chat.messages.get(0).content, "Name a colour.")
            verify(Find.findText(view, "1/2"))
            verify(Chat.regenerate())
            tryVerify(() => !Chat.generating, 60000)
            compare(Chat.messages.get(1).siblingCount, 2)
        }
    }
}
