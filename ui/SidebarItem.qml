import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Kestrel.Backend

// One conversation in the sidebar; rename in place, delete with undo.
ItemDelegate {
    id: item
    required property var conversationId
    required property string title
    required property string snippet
    required property string updatedText
    required property int index
    readonly property var itemId: conversationId
    readonly property bool current: conversationId === Chat.currentConversationId
    property bool renaming: false
    signal chosen()

    function startRename() {
        renaming = true
        editor.text = title
        editor.forceActiveFocus()
        editor.selectAll()
    }

    height: snippet.length > 0 ? 62 : 40
    padding: 0
    focusPolicy: Qt.NoFocus
    onClicked: chosen()
    Accessible.role: Accessible.ListItem
    Accessible.name: title

    background: Rectangle {
        radius: Theme.radiusSmall
        color: item.current ? Theme.selected : (item.hovered ? Theme.hover : "transparent")
        border.width: item.ListView.isCurrentItem && item.ListView.view.activeFocus ? 2 : 0
        border.color: Theme.accent
    }

    contentItem: RowLayout {
        spacing: 2
        ColumnLayout {
            Layout.fillWidth: true
            Layout.leftMargin: 10
            spacing: 2
            visible: !item.renaming
            Text {
                Layout.fillWidth: true
                text: item.title
                color: Theme.text
                elide: Text.ElideRight
                font.weight: item.current ? Font.Medium : Font.Normal
            }
            Text {
                Layout.fillWidth: true
                visible: item.snippet.length > 0
                text: item.snippet
                textFormat: Text.StyledText  // the store escapes user text and adds only <b>
                color: Theme.textMuted
                font.pixelSize: Theme.fontSizeSmall
                elide: Text.ElideRight
                maximumLineCount: 2
                wrapMode: Text.Wrap
            }
        }
        ThemedTextField {
            id: editor
            visible: item.renaming
            Layout.fillWidth: true
            Layout.leftMargin: 4
            placeholderText: qsTr("Conversation title")
            onAccepted: { Chat.renameConversation(item.conversationId, text); item.renaming = false }
            Keys.onEscapePressed: item.renaming = false
            onActiveFocusChanged: if (!activeFocus) item.renaming = false
        }
        Text {
            visible: !item.renaming && !item.hovered
            text: item.updatedText
            color: Theme.textFaint
            font.pixelSize: Theme.fontSizeSmall
            Layout.rightMargin: 10
        }
        IconButton {
            visible: !item.renaming && item.hovered
            size: 26
            iconName: "edit"
            tip: qsTr("Rename")
            onClicked: item.startRename()
        }
        IconButton {
            visible: !item.renaming && item.hovered
            size: 26
            iconName: "trash"
            tip: qsTr("Delete")
            Layout.rightMargin: 4
            onClicked: Chat.deleteConversation(item.conversationId)
        }
    }
}
