import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Kestrel.Backend

// The chat: header, streaming messages, the input box and the status bar.
Rectangle {
    id: root
    color: Theme.background
    signal exportRequested()
    signal settingsRequested()

    function focusInput() { composer.focusInput() }

    ColumnLayout {
        anchors.fill: parent
        spacing: 0

        // header
        RowLayout {
            Layout.fillWidth: true
            Layout.preferredHeight: 52
            Layout.leftMargin: 20
            Layout.rightMargin: 12
            spacing: 8
            Text {
                Layout.fillWidth: true
                text: Chat.currentTitle
                color: Theme.text
                font.pixelSize: Theme.fontSizeLarge - 1
                font.weight: Font.DemiBold
                elide: Text.ElideRight
                Accessible.role: Accessible.Heading
                Accessible.name: text
            }
            ModelChip { onClicked: root.settingsRequested() }
            IconButton {
                iconName: "export"
                tip: qsTr("Export conversation (Ctrl+E)")
                onClicked: root.exportRequested()
            }
        }
        Rectangle { Layout.fillWidth: true; implicitHeight: 1; color: Theme.border }

        LoadBanner { Layout.fillWidth: true }

        ListView {
            id: messages
            Layout.fillWidth: true
            Layout.fillHeight: true
            clip: true
            model: Chat.messages
            spacing: 22
            topMargin: 24
            bottomMargin: 24
            activeFocusOnTab: true
            keyNavigationEnabled: true
            Accessible.role: Accessible.List
            Accessible.name: qsTr("Messages")
            ScrollBar.vertical: ScrollBar { policy: ScrollBar.AsNeeded }
            // Follow the streaming reply unless the user scrolled up to read.
            property bool pinned: true
            onMovementEnded: pinned = atYEnd
            onContentHeightChanged: if (pinned) positionViewAtEnd()
            onCountChanged: { pinned = true; positionViewAtEnd() }
            delegate: MessageBubble {
                width: ListView.view.width
                isLast: index === ListView.view.count - 1
            }
            EmptyState {
                anchors.centerIn: parent
                visible: messages.count === 0
            }
        }

        Composer {
            id: composer
            Layout.fillWidth: true
            Layout.maximumWidth: Theme.contentWidth + 40
            Layout.alignment: Qt.AlignHCenter
            Layout.leftMargin: 20
            Layout.rightMargin: 20
        }
        StatusBar { Layout.fillWidth: true }
    }
}
