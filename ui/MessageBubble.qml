import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Kestrel.Backend

// One message. The user's sit in a bubble on the right; the model's fill the
// column, with reasoning folded, Markdown and code blocks, and actions (copy,
// edit, regenerate, continue a reply cut at its length limit, stopped or edited)
// underneath. Editing either starts a branch.
Item {
    id: root
    required property string role
    required property string content
    required property string reasoning
    required property string state
    required property string error
    required property string stopReason
    required property bool continuable
    required property double tokensPerSecond
    required property int siblingIndex
    required property int siblingCount
    required property var messageId
    required property var segments
    required property int index
    property bool isLast: false
    property bool editing: false
    readonly property bool isUser: role === "user"
    readonly property bool streaming: state === "streaming"

    implicitHeight: column.implicitHeight
    Accessible.role: Accessible.Paragraph
    Accessible.name: (isUser ? qsTr("You") : qsTr("Assistant")) + ": " + content

    HoverHandler { id: hover }

    ColumnLayout {
        id: column
        width: Math.min(root.width - 40, Theme.contentWidth)
        anchors.horizontalCenter: parent.horizontalCenter
        spacing: 6

        // user message: the bubble on the right, its actions beside it on hover
        RowLayout {
            visible: root.isUser && !root.editing
            Layout.fillWidth: true
            spacing: 2
            Item { Layout.fillWidth: true }
            BranchSwitcher {
                visible: root.siblingCount > 1
                index: root.siblingIndex
                count: root.siblingCount
                onMove: (delta) => Chat.switchBranch(root.messageId, delta)
            }
            IconButton {
                size: 28
                opacity: hover.hovered || activeFocus ? 1 : 0
                iconName: "copy"
                tip: qsTr("Copy")
                onClicked: Chat.copyText(root.content)
            }
            IconButton {
                size: 28
                opacity: hover.hovered || activeFocus ? 1 : 0
                iconName: "edit"
                tip: qsTr("Edit")
                enabled: !Chat.generating
                onClicked: root.editing = true
            }
            Rectangle {
                Layout.leftMargin: 4
                Layout.maximumWidth: column.width * 0.75
                implicitWidth: userText.implicitWidth + 28
                implicitHeight: userText.implicitHeight + 20
                radius: 16
                color: Theme.userBubble
                TextEdit {
                    id: userText
                    x: 14; y: 10
                    width: Math.min(implicitWidth, column.width * 0.75 - 28)
                    text: root.content
                    readOnly: true
                    selectByMouse: true
                    wrapMode: TextEdit.Wrap
                    color: Theme.text
                    font.pixelSize: Theme.fontSize
                    selectionColor: Theme.accent
                    selectedTextColor: Theme.accentText
                }
            }
        }
        MessageEditor {
            visible: root.editing
            Layout.fillWidth: true
            sends: root.isUser
            initialText: root.content
            onSaved: (text) => { root.editing = false; Chat.editMessage(root.messageId, text) }
            onCancelled: root.editing = false
        }

        // assistant message
        ReasoningFold {
            visible: !root.isUser && root.reasoning.length > 0
            Layout.fillWidth: true
            text: root.reasoning
            streaming: root.streaming && root.content.length === 0
        }
        MarkdownBody {
            visible: !root.isUser && !root.editing
            Layout.fillWidth: true
            segments: root.segments
            streaming: root.streaming
        }
        Text {
            visible: !root.isUser && root.state === "error"
            Layout.fillWidth: true
            wrapMode: Text.Wrap
            color: Theme.danger
            text: qsTr("The reply failed: %1").arg(root.error)
        }

        // actions
        RowLayout {
            spacing: 2
            opacity: hover.hovered || root.isLast || root.siblingCount > 1 || root.activeFocus ? 1 : 0
            visible: !root.isUser && !root.streaming && !root.editing
            BranchSwitcher {
                visible: root.siblingCount > 1
                index: root.siblingIndex
                count: root.siblingCount
                onMove: (delta) => Chat.switchBranch(root.messageId, delta)
            }
            IconButton {
                size: 28
                iconName: "copy"
                tip: qsTr("Copy")
                onClicked: Chat.copyText(root.content)
            }
            IconButton {
                objectName: "editReplyButton"
                size: 28
                iconName: "edit"
                tip: qsTr("Edit")
                enabled: !Chat.generating
                onClicked: root.editing = true
            }
            IconButton {
                visible: root.isLast
                size: 28
                iconName: "refresh"
                tip: qsTr("Regenerate")
                enabled: !Chat.generating
                onClicked: Chat.regenerate()
            }
            IconButton {
                objectName: "continueButton"
                visible: root.isLast && root.continuable
                size: 28
                iconName: "continue"
                tip: qsTr("Continue")
                enabled: !Chat.generating
                onClicked: Chat.continueReply()
            }
            Text {
                visible: !root.isUser && (root.state === "interrupted" || root.stopReason === "max_tokens" ||
                                          root.stopReason === "edited" || root.stopReason === "context_full")
                text: root.state === "interrupted" ? qsTr("stopped")
                    : root.stopReason === "edited" ? qsTr("edited")
                    : root.stopReason === "context_full" ? qsTr("the conversation filled the model's context")
                    : qsTr("cut at the reply length limit")
                color: Theme.textFaint
                font.pixelSize: Theme.fontSizeSmall
                leftPadding: 6
            }
            Text {
                visible: !root.isUser && root.tokensPerSecond > 0
                text: qsTr("%1 tok/s").arg(root.tokensPerSecond.toFixed(1))
                color: Theme.textFaint
                font.pixelSize: Theme.fontSizeSmall
                leftPadding: 6
            }
        }
    }
}
