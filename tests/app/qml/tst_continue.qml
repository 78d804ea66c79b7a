import QtQuick
import QtTest
import Kestrel
import Kestrel.Backend
import "find_text.js" as Find

// A reply cut at its length limit says so under it, and its Continue button goes
// on writing the same message; a reply the user rewrites can be continued too.
Item {
    width: 900; height: 640
    ChatView { id: view; anchors.fill: parent }

    TestCase {
        name: "Continue"
        when: windowShown

        function initTestCase() {
            if (!modelAvailable) skip("SmolLM2 missing; run scripts/fetch-models.sh")
            tryVerify(() => Chat.modelState === "ready", 60000)
        }
        function init() {
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

        // A reply that fills the context (1024 tokens here) says so, and offers no Continue.
        function test_contextFullIsSaid() {
            AppSettings.maxTokens = -1  // no limit but the context
            verify(AppSettings.apply())
            Chat.newConversation()
            // ~900 one-token words leave the reply ~80 tokens of the 1024 (SmolLM2 stops a
            // short count by itself, so the prompt fills most of the context).
            const filler = Array(900).fill("falcon").join(" ")
            verify(Chat.send(filler + "\n\nNow count from 1 to 100, one number per line."))
            tryVerify(() => !Chat.generating, 120000)
            compare(Chat.messages.get(1).stopReason, "context_full")
            verify(!Chat.messages.get(1).continuable)
            wait(50)
            verify(Find.findText(view, "the conversation filled the model's context"))
            verify(!Find.findText(view, "Continue"), "nothing to continue into")
        }

        // A reply rewritten by the user is saved (not sent), marked, and can be continued.
        function test_editReplyThenContinue() {
            Chat.newConversation()
            verify(Chat.send("Name three colours."))
            tryVerify(() => !Chat.generating, 60000)
            wait(50)
            const edit = Find.findNamed(view, "editReplyButton")
            verify(edit, "an Edit button under the reply")
            mouseClick(edit)
            const area = Find.findNamed(view, "messageEditorArea")
            verify(area, "the reply opens in the editor")
            const mine = "My three colours are: red,"
            area.text = mine
            const save = Find.findText(view, "Save")
            verify(save, "a reply is saved, not sent")
            mouseClick(save)
            verify(!Chat.generating)
            compare(Chat.messages.get(1).content, mine)
            compare(Chat.messages.get(1).stopReason, "edited")
            compare(Chat.messages.get(1).siblingCount, 2)
            wait(50)
            verify(Find.findText(view, "edited"), "the reply is marked as edited")
            const button = Find.findText(view, "Continue")
            verify(button, "an edited reply can be continued")
            mouseClick(button)
            tryVerify(() => !Chat.generating, 60000)
            const after = Chat.messages.get(1).content
            verify(after.length > mine.length && after.startsWith(mine), after)
        }
    }
}
