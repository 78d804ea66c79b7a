import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Kestrel.Backend

// The conversation list: new chat, search (full text), rename and delete.
Rectangle {
    id: root
    color: Theme.sidebar
    signal newChatRequested()
    signal settingsRequested()
    signal importRequested()
    signal conversationChosen()

    function focusSearch() {
        search.forceActiveFocus()
        search.selectAll()
    }

    ColumnLayout {
        anchors.fill: parent
        anchors.margins: 12
        spacing: 10

        RowLayout {
            Layout.fillWidth: true
            spacing: 8
            Image {
                source: "kestrel.svg"
                sourceSize: Qt.size(26, 26)
                Accessible.ignored: true
            }
            Text {
                text: qsTr("Kestrel")
                color: Theme.text
                font.pixelSize: Theme.fontSizeLarge
                font.weight: Font.DemiBold
                Layout.fillWidth: true
            }
            IconButton {
                iconName: "plus"
                tip: qsTr("New chat (Ctrl+N)")
                onClicked: root.newChatRequested()
            }
        }

        ThemedTextField {
            id: search
            objectName: "searchField"
            Layout.fillWidth: true
            placeholderText: qsTr("Search conversations (Ctrl+F)")
            leftPadding: 32
            onTextChanged: Chat.conversations.query = text
            Keys.onEscapePressed: { text = ""; focus = false }
            Keys.onDownPressed: list.forceActiveFocus()
            Image {
                anchors.left: parent.left
                anchors.leftMargin: 10
                anchors.verticalCenter: parent.verticalCenter
                source: "icons/search.svg"
                sourceSize: Qt.size(15, 15)
                opacity: 0.5
                Accessible.ignored: true
            }
        }

        ListView {
            id: list
            Layout.fillWidth: true
            Layout.fillHeight: true
            clip: true
            spacing: 2
            model: Chat.conversations
            keyNavigationEnabled: true
            activeFocusOnTab: true
            currentIndex: Chat.conversations.rowOf(Chat.currentConversationId)
            Accessible.role: Accessible.List
            Accessible.name: qsTr("Conversations")
            ScrollBar.vertical: ScrollBar { policy: ScrollBar.AsNeeded }
            delegate: SidebarItem {
                width: ListView.view.width
                onChosen: {
                    Chat.selectConversation(conversationId)
                    root.conversationChosen()
                }
            }
            Keys.onReturnPressed: if (currentItem) currentItem.chosen()
            Keys.onDeletePressed: if (currentItem) Chat.deleteConversation(currentItem.itemId)
            Keys.onPressed: (event) => {
                if (event.key === Qt.Key_F2 && currentItem) { currentItem.startRename(); event.accepted = true }
            }

            Text {
                anchors.centerIn: parent
                width: parent.width - 24
                visible: list.count === 0
                horizontalAlignment: Text.AlignHCenter
                wrapMode: Text.Wrap
                color: Theme.textMuted
                text: search.text.length > 0 ? qsTr("No conversation mentions “%1”.").arg(search.text)
                                             : qsTr("Your conversations appear here.")
            }
        }

        RowLayout {
            Layout.fillWidth: true
            spacing: 4
            IconButton {
                iconName: "settings"
                tip: qsTr("Settings (Ctrl+,)")
                onClicked: root.settingsRequested()
            }
            IconButton {
                iconName: "import"
                tip: qsTr("Import conversations…")
                onClicked: root.importRequested()
            }
            Item { Layout.fillWidth: true }
            Text {
                text: Chat.conversations.count === 1 ? qsTr("1 chat") : qsTr("%1 chats").arg(Chat.conversations.count)
                color: Theme.textFaint
                font.pixelSize: Theme.fontSizeSmall
            }
        }
    }
}
